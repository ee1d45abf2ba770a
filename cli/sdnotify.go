package cli

import (
	"net"
	"os"

	"github.com/sirupsen/logrus"
)

// sdNotifyReady tells systemd that the server is serving, for the book's
// kube-apiserver unit (Type=notify): it sends READY=1 to $NOTIFY_SOCKET, when set.
func sdNotifyReady(log *logrus.Logger) func(addr string, sec *securePort) {
	return func(string, *securePort) {
		if err := sdNotify(os.Getenv("NOTIFY_SOCKET"), "READY=1"); err != nil {
			log.WithError(err).Warn("systemd readiness not sent")
		}
	}
}

// sdNotify sends state to systemd's notify socket; nothing without a socket.
func sdNotify(socket, state string) error {
	if socket == "" {
		return nil
	}
	if socket[0] == '@' { // abstract namespace
		socket = "\x00" + socket[1:]
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: socket, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = conn.Write([]byte(state))
	return err
}
