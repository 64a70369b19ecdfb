"""Optional integrations (`make test-integration`): torch bitmasks, the transformers LogitsProcessor
end to end with a tiny randomly initialised GPT-2 (no download), the vLLM-shaped backend.
Judges: lark and `json.loads` on every finished output; numpy's own fill/apply for the tensors."""

from __future__ import annotations

import json

import lark
import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import glrmask_cli  # noqa: E402
import glrmask_runtime  # noqa: E402
from devtools.builds import JSON_GRAMMAR  # noqa: E402
from glrmask_cli.vllm_backend import GLRMaskBackend  # noqa: E402
from glrmask_cli.vocab.registry import load_vocabulary  # noqa: E402
from glrmask_runtime.torch import allocate_token_bitmask, apply_token_bitmask_inplace  # noqa: E402
from glrmask_runtime.transformers import GLRMaskLogitsProcessor  # noqa: E402

pytestmark = pytest.mark.integration
GPT2 = load_vocabulary("gpt2")
EOS = 50256


@pytest.fixture(scope="module")
def artifact():
    return glrmask_cli.compile_grammar(JSON_GRAMMAR, tokenizer="gpt2").load()


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=2, n_head=2, n_embd=64, n_positions=256, vocab_size=50257,
                                     bos_token_id=EOS, eos_token_id=EOS)
    return transformers.GPT2LMHeadModel(config).eval()


def test_fill_bitmask_writes_a_cpu_tensor_in_place(artifact):
    matcher = artifact.matcher()
    matcher.commit_bytes(b'{"a": [1')
    tensor = allocate_token_bitmask(3, 50_304)
    matcher.fill_bitmask(tensor, 2)
    array = glrmask_runtime.allocate_bitmask(3, 50_304)
    matcher.fill_bitmask(array, 2)
    assert np.array_equal(tensor.numpy(), array)


def test_apply_matches_numpy_on_a_padded_head(artifact):
    matcher = artifact.matcher()
    matcher.commit_bytes(b"[tr")
    bitmask = allocate_token_bitmask(2, 50_304)
    matcher.fill_bitmask(bitmask, 0)
    logits = torch.randn(2, 50_304)
    expected = logits.numpy().copy()
    glrmask_runtime.apply_bitmask_inplace(expected, bitmask.numpy())
    apply_token_bitmask_inplace(logits, bitmask)
    assert np.array_equal(logits.numpy(), expected)
    assert torch.isinf(logits[0, 50_257:]).all() and torch.isfinite(logits[1]).all()


def test_apply_refuses_a_bitmask_on_another_device_or_too_narrow():
    with pytest.raises(ValueError, match="move it first"):
        apply_token_bitmask_inplace(torch.zeros(1, 64, device="meta"), allocate_token_bitmask(1, 64))
    with pytest.raises(ValueError, match="W >= 3"):
        apply_token_bitmask_inplace(torch.zeros(1, 70), allocate_token_bitmask(1, 64))
    with pytest.raises(TypeError, match="CPU"):
        class OnGPU:
            device = type("Device", (), {"type": "cuda"})()
            def __array__(self):
                raise RuntimeError("cuda")
        glrmask_runtime.Matcher.fill_bitmask(glrmask_cli.compile_grammar(JSON_GRAMMAR).load().matcher(), OnGPU())


def _generated(sequence, prompt_length):
    ids = sequence[prompt_length:].tolist()
    finished = EOS in ids
    return GPT2.decode_bytes(ids[:ids.index(EOS)] if finished else ids), finished


@pytest.mark.parametrize("mode", ["greedy", "sampling", "beam"])
def test_generate_with_the_processor_gives_json(artifact, model, mode):
    judge = lark.Lark(JSON_GRAMMAR.read_text(), parser="lalr")
    prompt = torch.full((4, 1), EOS)
    seeds = range(20) if mode == "sampling" else range(1)
    finished_outputs = 0
    for seed in seeds:
        torch.manual_seed(seed)
        options = {"greedy": {"do_sample": False}, "sampling": {"do_sample": True},
                   "beam": {"do_sample": False, "num_beams": 3}}[mode]
        out = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=48,
                             logits_processor=transformers.LogitsProcessorList([GLRMaskLogitsProcessor(artifact)]),
                             pad_token_id=EOS, eos_token_id=EOS, exponential_decay_length_penalty=(8, 1.6),
                             **options)
        for row in out:
            text, finished = _generated(row, prompt.shape[1])
            if finished:
                json.loads(text)
                judge.parse(text.decode())
                finished_outputs += 1
            else:          # stopped by max_new_tokens: still a prefix some document continues
                matcher = artifact.matcher()
                matcher.commit_bytes(text)
    assert finished_outputs >= (20 if mode == "sampling" else 1)


def test_the_vllm_shaped_backend_compiles_and_fills_a_padded_batch():
    backend = GLRMaskBackend(tokenizer="gpt2", vocab_size=50_304)
    grammar = backend.compile_grammar("grammar", 'start: "yes" | "no"\n')
    bitmask = backend.allocate_token_bitmask(8)
    assert tuple(bitmask.shape) == (8, 1572) and bitmask.dtype == torch.int32
    grammar.fill_bitmask(bitmask, 5)
    allowed = glrmask_runtime.bitmask.bitmask_to_bool(bitmask[5].numpy(), 50_304)
    assert {GPT2.token_bytes[i] for i in np.flatnonzero(allowed)} >= {b"yes", b"no", b"y", b"n"}
    assert not allowed[50_257:].any()
    assert grammar.accept_tokens("r1", [GPT2.encode("yes")[0], EOS]) and grammar.is_terminated()
    with pytest.raises(ValueError, match="REGEX is not supported"):
        backend.compile_grammar(type("Options", (), {"name": "REGEX"})(), "a+")


def test_a_transformers_fast_tokenizer_gives_the_vocabulary_of_its_file():
    from devtools.data import DataUnavailable, tokenizer_file
    from glrmask_cli.vocab.objects import vocabulary_from_object
    tokenizers = pytest.importorskip("tokenizers")
    try:
        path = tokenizer_file("qwen3.tokenizer.json")
    except DataUnavailable as e:
        pytest.skip(str(e))
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizers.Tokenizer.from_file(str(path)),
                                                eos_token="<|im_end|>")
    vocab = vocabulary_from_object(fast)
    from_file = load_vocabulary(str(path))
    assert vocab.token_bytes == from_file.token_bytes
    assert [vocab.special_names[i] for i in vocab.eos_ids] == ["<|im_end|>"]
    built = glrmask_cli.compile_grammar('start: "ok"\n', tokenizer=fast, vocab_size=151_936)
    assert built.load().vocab_size == 151_936


def test_the_sglang_shaped_grammar_masks_torch_logits(artifact):
    from glrmask_runtime.sglang import GLRMaskSGLangGrammar
    grammar = GLRMaskSGLangGrammar(artifact.matcher())
    grammar.accept_token(GPT2.encode("[")[0])
    mask = grammar.allocate_vocab_mask(50_304, 2, "cpu")
    grammar.fill_vocab_mask(mask, 1)
    mask = GLRMaskSGLangGrammar.move_vocab_mask(mask, "cpu")
    logits = torch.zeros(2, 50_304)
    GLRMaskSGLangGrammar.apply_vocab_mask(logits, mask)
    allowed = torch.isfinite(logits[1]).numpy()
    assert np.array_equal(allowed[:50_257], grammar.matcher.mask()) and not allowed[50_257:].any()
    assert torch.isfinite(logits[0]).all()
