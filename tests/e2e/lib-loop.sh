# lib-loop.sh: the project the loop's e2e scripts give their agents.
#
#   spin_project   a new directory proj, made the current one: spin.c (the
#                  code the agents edit: `spin N` runs N million rounds of
#                  an LCG, then prints "done N"), its Makefile, tests/run
#                  (the test they must not touch) and a .gitignore; the
#                  hotloop.conf and the commit are each script's

spin_project() {
	mkdir proj && cd proj &&
	cp "$DATA/loop/spin.c" . &&
	printf "spin: spin.c\n\tcc -O1 -g -fno-omit-frame-pointer -o spin spin.c\n" >Makefile &&
	mkdir tests && printf "#!/bin/sh\n./spin 1 | grep -q \"^done 1\$\"\n" >tests/run && chmod +x tests/run &&
	printf "spin\n" >.gitignore
}
