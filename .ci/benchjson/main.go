// Command benchjson turns `go test -bench` output into one JSON object per benchmark
// line on stdout (name, iterations and every reported metric), passing other lines
// to stderr, so that `make bench` prints machine-readable figures.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

func main() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	enc := json.NewEncoder(os.Stdout)
	pkg := ""
	failed := false
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = p
		}
		if strings.HasPrefix(line, "FAIL") || strings.HasPrefix(line, "--- FAIL") {
			failed = true
		}
		rec, ok := parse(line)
		if !ok {
			fmt.Fprintln(os.Stderr, line)
			continue
		}
		rec["package"] = pkg
		if err := enc.Encode(rec); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if failed {
		os.Exit(1)
	}
}

// parse reads "BenchmarkX-2  10  123 ns/op  4.5 creates/s" into a record.
func parse(line string) (map[string]any, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
		return nil, false
	}
	n, err := strconv.Atoi(f[1])
	if err != nil {
		return nil, false
	}
	metrics := map[string]float64{}
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return nil, false
		}
		metrics[f[i+1]] = v
	}
	return map[string]any{"benchmark": f[0], "iterations": n, "metrics": metrics}, true
}
