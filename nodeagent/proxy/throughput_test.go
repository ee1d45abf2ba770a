package proxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
)

// Load of BenchmarkClusterIPThroughput: clients each send requests one after another
// for loadDuration, loadRounds times per target, the targets taking turns (2 s each).
const (
	loadClients  = 8
	loadDuration = 500 * time.Millisecond
	loadRounds   = 4
	httpPort     = 8090
)

// BenchmarkClusterIPThroughput compares, in one run, requests per second to two HTTP
// backends (the kernel tests' endpoint addresses) addressed directly by pod IP (round
// robin in the client) with the same load through a cluster IP: in iptables mode, and
// in userspace mode (the proxier's sockets and portal rules). "new-conn" opens a
// connection per request, which pays the DNAT (and in userspace mode a second
// connection) each time; "keep-alive" reuses one connection per client. The issue's
// target is ratio-iptables >= 0.9; the benchmark reports, it asserts nothing about
// speed.
func BenchmarkClusterIPThroughput(b *testing.B) {
	needNetns(b)
	backends := []string{net.JoinHostPort(testEp1, fmt.Sprint(httpPort)), net.JoinHostPort(testEp2, fmt.Sprint(httpPort))}
	for _, addr := range backends {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "ok\n")
		})}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
	}
	log := logrus.New()
	log.SetLevel(logrus.ErrorLevel)
	node := NodeInfo{Name: "node-1", IP: testNodeIP}

	for _, style := range []struct {
		name      string
		keepAlive bool
	}{{"new-conn", false}, {"keep-alive", true}} {
		b.Run(style.name, func(b *testing.B) {
			var direct, viaIPTables, viaUserspace float64
			for b.Loop() {
				resetTables(b)
				// One service per mode, both programmed at once, so that the three
				// loads can take turns and see the same background load.
				ipVIP, usVIP := nextVIP(), nextVIP()
				svcs := []corev1.Service{newSvc("default", "web", ipVIP).port("http", 80).obj()}
				usSvcs := []corev1.Service{newSvc("default", "web", usVIP).port("http", 80).obj()}
				eps := []corev1.Endpoints{newEps("default", "web", []string{testEp1, testEp2}, map[string]int32{"http": httpPort})}
				us := NewUserspace("", log)
				defer us.Close()
				ports, err := us.Update(usSvcs, eps)
				if err != nil {
					b.Fatal(err)
				}
				ipRules, usRules := IPTablesRules(svcs, eps, node), UserspaceRules(usSvcs, ports, node)
				both := Ruleset{Chains: append(ipRules.Chains, usRules.Chains...), Jumps: append(ipRules.Jumps, usRules.Jumps...)}
				a, err := NewIPTablesApplier(Config{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := a.Apply(both); err != nil {
					b.Fatal(err)
				}
				direct, viaIPTables, viaUserspace = 0, 0, 0
				for range loadRounds {
					direct += load(b, backends, style.keepAlive) / loadRounds
					viaIPTables += load(b, []string{net.JoinHostPort(ipVIP, "80")}, style.keepAlive) / loadRounds
					viaUserspace += load(b, []string{net.JoinHostPort(usVIP, "80")}, style.keepAlive) / loadRounds
				}
				us.Close()
			}
			b.ReportMetric(direct, "rps-direct")
			b.ReportMetric(viaIPTables, "rps-clusterip-iptables")
			b.ReportMetric(viaIPTables/direct, "ratio-iptables")
			b.ReportMetric(viaUserspace, "rps-clusterip-userspace")
			b.ReportMetric(viaUserspace/direct, "ratio-userspace")
		})
	}
}

// load runs loadClients clients for loadDuration, client i starting its round robin
// over addrs at i, and returns the requests per second. Any failed request fails b.
func load(b *testing.B, addrs []string, keepAlive bool) float64 {
	b.Helper()
	var done atomic.Int64
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(loadDuration)
	for i := range loadClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := &http.Transport{DisableKeepAlives: !keepAlive, MaxIdleConnsPerHost: 1}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
			for n := i; time.Now().Before(deadline); n++ {
				if err := get(client, "http://"+addrs[n%len(addrs)]+"/"); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatalf("load %v: %v", addrs, err)
	}
	return float64(done.Load()) / time.Since(start).Seconds()
}

func get(c *http.Client, url string) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
