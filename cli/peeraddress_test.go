package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeptPeerAddress: a server of one takes the peer address it chose before
// again, unless its port is taken by then.
func TestKeptPeerAddress(t *testing.T) {
	file := filepath.Join(t.TempDir(), peerAddressFile)
	first, err := keptPeerAddress(file)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(file); err != nil || strings.TrimSpace(string(b)) != first {
		t.Fatalf("file holds %q (%v), want %s", b, err, first)
	}
	again, err := keptPeerAddress(file)
	if err != nil || again != first {
		t.Fatalf("second start: %s (%v), want %s", again, err, first)
	}
	ln, err := net.Listen("tcp", first) // another program took the port meanwhile
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	other, err := keptPeerAddress(file)
	if err != nil || other == first {
		t.Fatalf("port taken: %s (%v), want another than %s", other, err, first)
	}
	if b, _ := os.ReadFile(file); strings.TrimSpace(string(b)) != other {
		t.Fatalf("file holds %q, want the new %s", b, other)
	}
}
