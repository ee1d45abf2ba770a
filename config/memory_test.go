package config

import (
	"fmt"
	"testing"
)

// memoryFlags is what the memory flags come to: the percents and the sizes in bytes.
type memoryFlags struct {
	max, min        int
	headroom, limit int64
}

func TestServerValidateMemory(t *testing.T) {
	policy := func(want memoryFlags) func(*Server) string {
		return func(s *Server) string {
			h, l := s.MemorySizes()
			if got := (memoryFlags{s.GCPercent, s.GCMinPercent, h, l}); got != want {
				return fmt.Sprintf("policy %+v, want %+v", got, want)
			}
			return ""
		}
	}
	runServerCases(t, []serverCase{
		{name: "defaults", change: func(*Server) {},
			check: policy(memoryFlags{max: 400, min: 40, headroom: 256 << 20})},
		{name: "sizes in bytes and quantities", change: func(s *Server) { s.GCHeadroom, s.MemoryLimit = "1000000", "4Gi" },
			check: policy(memoryFlags{max: 400, min: 40, headroom: 1000000, limit: 4 << 30})},
		{name: "headroom off", change: func(s *Server) { s.GCHeadroom = "0" },
			check: policy(memoryFlags{max: 400, min: 40})},
		{name: "min equals max", change: func(s *Server) { s.GCPercent, s.GCMinPercent = 100, 100 },
			check: policy(memoryFlags{max: 100, min: 100, headroom: 256 << 20})},
		{name: "gc percent too small", change: func(s *Server) { s.GCPercent = 5 }, wantErr: "--gc-percent 5"},
		{name: "min percent too small", change: func(s *Server) { s.GCMinPercent = 5 }, wantErr: "--gc-min-percent 5"},
		{name: "min percent over gc percent", change: func(s *Server) { s.GCMinPercent = 500 }, wantErr: "--gc-min-percent 500"},
		{name: "headroom not a size", change: func(s *Server) { s.GCHeadroom = "lots" }, wantErr: "--gc-headroom"},
		{name: "negative limit", change: func(s *Server) { s.MemoryLimit = "-1Gi" }, wantErr: "--memory-limit"},
		{name: "fractional limit", change: func(s *Server) { s.MemoryLimit = "0.5" }, wantErr: "--memory-limit"},
	})
}
