package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The anchor of the replication benchmarks (issue 13): Debian's etcd-server as a
// cluster of members on loopback, each with its own data directory, driven through
// etcd's JSON gateway (/v3/kv/put) with durable 2 KB puts, the size of a pod.

// etcdCluster is a running etcd cluster: the client URL of each member.
type etcdCluster struct {
	clients []string
	cmds    []*exec.Cmd
}

// startEtcd starts an etcd cluster of n members on free loopback ports, or skips
// when the etcd binary is not installed (apt-get install etcd-server).
func startEtcd(tb testing.TB, n int) *etcdCluster {
	tb.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		tb.Skip("etcd is not installed (apt-get install etcd-server): no anchor to measure against")
	}
	type member struct{ name, peer, client string }
	ms := make([]member, n)
	var initial []string
	for i := range ms {
		ms[i] = member{name: fmt.Sprintf("e%d", i+1), peer: "http://127.0.0.1:" + strconv.Itoa(freePort(tb)), client: "http://127.0.0.1:" + strconv.Itoa(freePort(tb))}
		initial = append(initial, ms[i].name+"="+ms[i].peer)
	}
	c := &etcdCluster{}
	for _, m := range ms {
		dir := filepath.Join(tb.TempDir(), m.name)
		cmd := exec.Command(bin, "--name", m.name, "--data-dir", dir,
			"--listen-peer-urls", m.peer, "--initial-advertise-peer-urls", m.peer,
			"--listen-client-urls", m.client, "--advertise-client-urls", m.client,
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new",
			"--initial-cluster-token", "kubeactor-anchor", "--log-level", "error")
		cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
		if err := cmd.Start(); err != nil {
			tb.Fatalf("start etcd %s: %v", m.name, err)
		}
		c.cmds = append(c.cmds, cmd)
		c.clients = append(c.clients, m.client)
	}
	tb.Cleanup(c.stop)
	Eventually(tb, 30*time.Second, "etcd cluster healthy", func() error {
		for _, u := range c.clients {
			if err := etcdPut(http.DefaultClient, u, "/anchor/ready", []byte("ok")); err != nil {
				return err
			}
		}
		return nil
	})
	return c
}

func (c *etcdCluster) stop() {
	for _, cmd := range c.cmds {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	c.cmds = nil
}

// etcdPut is one durable put through etcd's JSON gateway.
func etcdPut(client *http.Client, base, key string, value []byte) error {
	body, _ := json.Marshal(map[string]string{
		"key":   base64.StdEncoding.EncodeToString([]byte(key)),
		"value": base64.StdEncoding.EncodeToString(value),
	})
	resp, err := client.Post(base+"/v3/kv/put", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd put %s: HTTP %d", key, resp.StatusCode)
	}
	return nil
}

// etcdPuts writes n values of size bytes from `clients` concurrent keep-alive
// connections spread over the members, and returns puts per second.
func etcdPuts(tb testing.TB, c *etcdCluster, n, clients, size int) float64 {
	tb.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	value := bytes.Repeat([]byte("v"), size)
	prefix := fmt.Sprintf("/anchor/%d/", time.Now().UnixNano())
	var next, failures atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			base := c.clients[w%len(c.clients)]
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				if err := etcdPut(client, base, fmt.Sprintf("%s%d", prefix, i), value); err != nil {
					failures.Add(1)
				}
			}
		}(w)
	}
	wg.Wait()
	rate := float64(n) / time.Since(start).Seconds()
	if f := failures.Load(); f > 0 {
		tb.Fatalf("%d of %d etcd puts failed", f, n)
	}
	return rate
}

// BenchmarkEtcdAnchor measures the anchor alone: durable 2 KB puts into a single
// etcd member and into a three-member cluster on this machine, 64 clients.
func BenchmarkEtcdAnchor(b *testing.B) {
	for i := 0; i < b.N; i++ {
		for _, members := range []int{1, 3} {
			c := startEtcd(b, members)
			rate := etcdPuts(b, c, 20000, 64, 2048)
			b.ReportMetric(rate, fmt.Sprintf("etcd%d-puts/s", members))
			c.stop()
		}
	}
}
