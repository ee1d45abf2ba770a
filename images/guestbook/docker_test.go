package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The images images/build.sh builds for the guestbook.
var guestbookImages = []string{
	"kubeactor/redis:latest",
	"kubeactor/redis-slave:latest",
	"kubeactor/guestbook-frontend:latest",
}

// TestGuestbookContainers runs the three images on the local Docker engine, wired
// as the guestbook's pods are (service hosts in the environment, here the
// containers' own IPs): a write through the frontend reaches the master, and a read
// through the frontend returns it from the slave once replication caught up.
func TestGuestbookContainers(t *testing.T) {
	if out, err := exec.Command("docker", "version", "--format", "{{.Server.Version}}").CombinedOutput(); err != nil {
		t.Skipf("Docker engine unreachable, skipping the guestbook container test: %v: %s", err, strings.TrimSpace(string(out)))
	}
	if out, err := exec.Command("docker", append([]string{"image", "inspect", "--format", "{{.Id}}"}, guestbookImages...)...).CombinedOutput(); err != nil {
		t.Skipf("guestbook images missing (run images/build.sh): %s", strings.TrimSpace(string(out)))
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	prefix := "guestbook-test-" + hex.EncodeToString(suffix)

	run := func(name string, args ...string) string {
		t.Helper()
		full := append([]string{"run", "-d", "--name", prefix + "-" + name}, args...)
		if out, err := exec.Command("docker", full...).CombinedOutput(); err != nil {
			t.Fatalf("docker run %s: %v: %s", name, err, out)
		}
		t.Cleanup(func() {
			if t.Failed() {
				logs, _ := exec.Command("docker", "logs", "--tail", "30", prefix+"-"+name).CombinedOutput()
				t.Logf("%s logs:\n%s", name, logs)
			}
			_ = exec.Command("docker", "rm", "-f", "-v", prefix+"-"+name).Run()
		})
		out, err := exec.Command("docker", "inspect", "-f", "{{.NetworkSettings.IPAddress}}", prefix+"-"+name).Output()
		ip := strings.TrimSpace(string(out))
		if err != nil || net.ParseIP(ip) == nil {
			t.Fatalf("no IP for container %s: %v (%q)", name, err, ip)
		}
		return ip
	}
	masterIP := run("master", "kubeactor/redis:latest")
	slaveIP := run("slave", "-e", "GET_HOSTS_FROM=env", "-e", "REDIS_MASTER_SERVICE_HOST="+masterIP, "kubeactor/redis-slave:latest")
	frontendIP := run("frontend", "-e", "GET_HOSTS_FROM=env",
		"-e", "REDIS_MASTER_SERVICE_HOST="+masterIP, "-e", "REDIS_SLAVE_SERVICE_HOST="+slaveIP,
		"kubeactor/guestbook-frontend:latest")

	client := &http.Client{Timeout: 5 * time.Second}
	get := func(query string) (string, error) {
		resp, err := client.Get("http://" + net.JoinHostPort(frontendIP, "80") + "/guestbook.php?" + query)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return "", err
		}
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("status %d: %s", resp.StatusCode, body)
		}
		return string(body), nil
	}
	steps := []struct {
		name  string
		query string
		want  string
	}{
		{name: "set through the master", query: "cmd=set&key=messages&value=Hello", want: `{"message": "Updated"}`},
		{name: "get from the slave", query: "cmd=get&key=messages", want: `{"data": "Hello"}`},
	}
	deadline := time.Now().Add(45 * time.Second)
	// Poll: the frontend starts listening and the slave syncs in the background.
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for _, s := range steps {
		var last string
		var lastErr error
		for {
			last, lastErr = get(s.query)
			if lastErr == nil && last == s.want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: ?%s gave %q, %v; want %q", s.name, s.query, last, lastErr, s.want)
			}
			<-tick.C
		}
	}
}
