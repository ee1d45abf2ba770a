package config

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Server configures `kubeactor server`: the store, the actor system and the gateway.
// Flag names follow the book's kube-apiserver; `_` is accepted for `-` everywhere.
type Server struct {
	DataDir             string        `name:"data-dir" env:"KUBEACTOR_DATA_DIR" help:"Directory of the Pebble store (default: ~/.kubeactor/data)."`
	InsecureBindAddress string        `name:"insecure-bind-address" default:"127.0.0.1" help:"IP address on which to serve the insecure port (0.0.0.0 for all interfaces)."`
	InsecurePort        int           `name:"insecure-port" default:"8080" help:"Port of the unauthenticated API."`
	ChangeLogWindow     int64         `name:"change-log-window" default:"100000" help:"Revisions kept in the change log; watches older than that get 410 Gone."`
	RequestTimeout      time.Duration `name:"request-timeout" default:"30s" help:"How long a write waits for its owning actor."`
	MaxRequestBodyBytes int64         `name:"max-request-body-bytes" default:"3145728" help:"Largest accepted request body; larger bodies get 413."`
	ShutdownGracePeriod time.Duration `name:"shutdown-grace-period" default:"5s" help:"How long to drain requests on SIGTERM."`
	Profiling           bool          `name:"profiling" default:"true" negatable:"" help:"Serve Go profiles at /debug/pprof/ (the book's --profiling)."`
	GCPercent           int           `name:"gc-percent" default:"400" help:"Go GC target percentage (GOGC) for the server; the stored objects are a large, steady live heap, so collecting less often saves CPU at the price of memory. The GOGC environment variable wins when set."`
}

// DefaultDataDir is where the store lives when --data-dir is not given.
func DefaultDataDir() string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return filepath.Join(os.TempDir(), "kubeactor", "data")
	}
	return filepath.Join(home, ".kubeactor", "data")
}

// Address is the host:port the insecure API listens on.
func (s *Server) Address() string {
	return net.JoinHostPort(s.InsecureBindAddress, strconv.Itoa(s.InsecurePort))
}

// Validate fills derived defaults and reports the first invalid setting.
func (s *Server) Validate() error {
	if s.DataDir == "" {
		s.DataDir = DefaultDataDir()
	}
	if net.ParseIP(s.InsecureBindAddress) == nil {
		return fmt.Errorf("--insecure-bind-address %q: not an IP address", s.InsecureBindAddress)
	}
	if s.InsecurePort < 0 || s.InsecurePort > 65535 {
		return fmt.Errorf("--insecure-port %d: must be between 0 and 65535", s.InsecurePort)
	}
	if s.ChangeLogWindow < 1 {
		return fmt.Errorf("--change-log-window %d: must be at least 1", s.ChangeLogWindow)
	}
	if s.RequestTimeout <= 0 {
		return fmt.Errorf("--request-timeout %s: must be positive", s.RequestTimeout)
	}
	if s.GCPercent < 10 {
		return fmt.Errorf("--gc-percent %d: must be at least 10", s.GCPercent)
	}
	if s.MaxRequestBodyBytes < 1024 {
		return fmt.Errorf("--max-request-body-bytes %d: must be at least 1024", s.MaxRequestBodyBytes)
	}
	return nil
}

// Logging configures logrus for every command.
type Logging struct {
	LogLevel  string `name:"log-level" default:"info" enum:"debug,info,warn,error" help:"Log level (debug, info, warn, error)."`
	LogFormat string `name:"log-format" default:"text" enum:"text,json" help:"Log format (text or json)."`
}
