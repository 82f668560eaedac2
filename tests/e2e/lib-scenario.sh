# lib-scenario.sh: a service project for the e2e scripts that judge builds
# of tests/workloads/svc.c under a scenario.
#
#   svc_project WORK   in the current directory: svc.c, its Makefile (the
#                      build's settings in build.h, WORK_DEFAULT = WORK)
#   svc_none_left      fails, naming them, when a service or load of this
#                      script outlives its scenario (2 s to go)
#   commit MSG         commit every tracked change

svc_project() {
	cp "$ROOT/tests/workloads/svc.c" "$ROOT/tests/workloads/workload.h" . &&
	printf "svc: svc.c build.h\n\tcc -O2 -g -fno-omit-frame-pointer -include build.h -o svc svc.c\n" >Makefile &&
	echo "#define WORK_DEFAULT $1" >build.h
}

svc_none_left() {
	for i in 1 2 3 4 5 6 7 8 9 10; do
		pgrep -f "$SCRATCH/.*svc (serve|load)" >/dev/null 2>&1 || return 0
		sleep 0.2
	done
	echo "left behind:"; pgrep -af "$SCRATCH/.*svc"; return 1
}

commit() { git -c user.name=t -c user.email=t@t commit -q -am "$1"; }
