package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeactor/kubeactor/config"
)

func TestReplicaConfigs(t *testing.T) {
	base := config.Server{DataDir: "/d", InsecurePort: 8080, DNSPort: 53}
	base.SecurePort = 6443
	cfgs := replicaConfigs(base, 3)
	for i, want := range []struct {
		name, dir, peer string
		port, secure    int
		dns             int
	}{
		{"m1", "/d/m1", "127.0.0.1:2380", 8080, 6443, 53},
		{"m2", "/d/m2", "127.0.0.1:2381", 8081, 6444, 0},
		{"m3", "/d/m3", "127.0.0.1:2382", 8082, 6445, 0},
	} {
		c := cfgs[i]
		if c.Name != want.name || c.DataDir != filepath.FromSlash(want.dir) || c.PeerAddress != want.peer ||
			c.InsecurePort != want.port || c.SecurePort != want.secure || c.DNSPort != want.dns {
			t.Errorf("replica %d: %s %s %s %d %d %d, want %+v", i, c.Name, c.DataDir, c.PeerAddress, c.InsecurePort, c.SecurePort, c.DNSPort, want)
		}
		if c.InitialCluster != "m1=127.0.0.1:2380,m2=127.0.0.1:2381,m3=127.0.0.1:2382" || len(c.Cluster) != 3 || !c.Clustered() {
			t.Errorf("replica %d: cluster %q %v", i, c.InitialCluster, c.Cluster)
		}
	}
	// Free ports stay free ports.
	base.InsecurePort, base.SecurePort = 0, 0
	for _, c := range replicaConfigs(base, 3) {
		if c.InsecurePort != 0 || c.SecurePort != 0 {
			t.Errorf("%s: ports %d %d, want 0 0", c.Name, c.InsecurePort, c.SecurePort)
		}
	}
}

func TestUpMastersFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--masters", "0"}, "--masters 0"},
		{[]string{"--masters", "3", "--name", "m1", "--initial-cluster", "m1=127.0.0.1:2380"}, "makes its own cluster"},
	} {
		var out, errOut bytes.Buffer
		args := append([]string{"kubeactor", "up", "--simulate", "1", "--data-dir", t.TempDir()}, tc.args...)
		if code := run(args, &out, &errOut); code == 0 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error with %q", tc.args, code, errOut.String(), tc.want)
		}
	}
}
