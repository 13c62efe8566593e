from wildtoolbench.cli import main

main()
