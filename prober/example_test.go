package prober_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/prober"
)

// Run a probe from Go: start from config.DefaultProbe, set a name, a URL
// and a load, compile it, run it, read the result. config.Compile checks
// the probe as a config file's probes are checked, and returns an error
// for one that is not valid. Here the target is loadprobe's demo target in
// an httptest server.
func Example() {
	srv := httptest.NewServer(target.New(target.Options{}))
	defer srv.Close()

	p := config.DefaultProbe
	p.Name = "noop"
	p.Request.URL = srv.URL + "/noop"
	p.Load.Concurrency = []int{1, 2}
	p.Load.StepDuration = model.Duration(300 * time.Millisecond)

	compiled, err := config.Compile(p)
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := prober.Run(context.Background(), compiled, prober.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}

	fmt.Println(r.Name, r.Mode, r.Ended)
	for _, s := range r.Steps {
		fmt.Printf("%g connections: error ratio %g, answered: %v\n", s.Level, s.ErrorRatio, s.Attempts > 0)
	}
	// Output:
	// noop concurrency completed
	// 1 connections: error ratio 0, answered: true
	// 2 connections: error ratio 0, answered: true
}
