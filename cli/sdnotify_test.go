package cli

import (
	"net"
	"path/filepath"
	"testing"
)

func TestSDNotify(t *testing.T) {
	tests := []struct {
		name   string
		socket func(t *testing.T) (string, *net.UnixConn)
		want   string
	}{
		{"no socket: nothing sent", func(*testing.T) (string, *net.UnixConn) { return "", nil }, ""},
		{"path socket", func(t *testing.T) (string, *net.UnixConn) {
			p := filepath.Join(t.TempDir(), "notify")
			c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: p, Net: "unixgram"})
			if err != nil {
				t.Fatal(err)
			}
			return p, c
		}, "READY=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			socket, conn := tt.socket(t)
			if err := sdNotify(socket, "READY=1"); err != nil {
				t.Fatal(err)
			}
			if conn == nil {
				return
			}
			defer conn.Close()
			buf := make([]byte, 64)
			n, err := conn.Read(buf)
			if err != nil || string(buf[:n]) != tt.want {
				t.Fatalf("read %q, %v; want %q", buf[:n], err, tt.want)
			}
		})
	}
}
