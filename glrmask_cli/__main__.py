from glrmask_cli.cli import main

main()
