"""GLRMask compiler: Lark grammar + tokenizer vocabulary -> Parser DWA artifact."""

__version__ = "0.1.0"
