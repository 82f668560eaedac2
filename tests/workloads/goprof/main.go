// goprof: a Go program that profiles itself with runtime/pprof, so the tests
// can check that hotloop reads another producer's pprof files.
package main

import (
	"os"
	"runtime/pprof"
	"time"
)

var sink uint64

//go:noinline
func goHotLoop(x uint64) uint64 {
	for i := 0; i < 100000; i++ {
		x = x*6364136223846793005 + uint64(i)
	}
	return x
}

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	pprof.StartCPUProfile(f)
	end := time.Now().Add(700 * time.Millisecond)
	for time.Now().Before(end) {
		sink = goHotLoop(sink)
	}
	pprof.StopCPUProfile()
	f.Close()
}
