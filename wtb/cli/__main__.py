from wtb.cli import main

main()
