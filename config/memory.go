package config

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
)

// MemorySizes are --gc-headroom and --memory-limit in bytes (cli makes the
// internal/memory policy of them and the percents). Call it after Validate: the
// sizes are checked there.
func (s *Server) MemorySizes() (headroom, limit int64) {
	headroom, _ = bytesFlag(s.GCHeadroom)
	limit, _ = bytesFlag(s.MemoryLimit)
	return headroom, limit
}

func (s *Server) validateMemory() error {
	if s.GCPercent < 10 {
		return fmt.Errorf("--gc-percent %d: must be at least 10", s.GCPercent)
	}
	if s.GCMinPercent < 10 || s.GCMinPercent > s.GCPercent {
		return fmt.Errorf("--gc-min-percent %d: must be between 10 and --gc-percent (%d)", s.GCMinPercent, s.GCPercent)
	}
	for flag, v := range map[string]string{"--gc-headroom": s.GCHeadroom, "--memory-limit": s.MemoryLimit} {
		if _, err := bytesFlag(v); err != nil {
			return fmt.Errorf("%s %q: %w", flag, v, err)
		}
	}
	return nil
}

// bytesFlag parses a size flag: a quantity such as 256Mi or 4Gi, or bytes; empty is 0.
func bytesFlag(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return 0, err
	}
	if q.Sign() < 0 {
		return 0, fmt.Errorf("must not be negative")
	}
	n, ok := q.AsInt64()
	if !ok {
		return 0, fmt.Errorf("not a whole number of bytes")
	}
	return n, nil
}
