from p2p_chinchon.cli import main

raise SystemExit(main())
