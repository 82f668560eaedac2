# lib-load.sh: the test server of the `hotloop load` scripts.
#
#   loadsrv_start MODE   start tests/workloads/bin/loadsrv MODE on a free
#                        127.0.0.1 port, its number in $PORT; stop it with
#                        loadsrv_stop (in test_when_finished)
#   loadsrv_stop         SIGTERM, wait; its "requests=N" is in srv.out

loadsrv_start() {
	rm -f srv.port srv.out
	"$WORKLOADS/loadsrv" "$1" srv.port >srv.out 2>&1 &
	echo $! >srv.pid
	i=0
	while [ ! -s srv.port ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	PORT=$(cat srv.port 2>/dev/null) && [ -n "$PORT" ]
}

loadsrv_stop() {
	[ -s srv.pid ] || return 0
	kill "$(cat srv.pid)" 2>/dev/null
	i=0
	while kill -0 "$(cat srv.pid)" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	rm -f srv.pid
}
