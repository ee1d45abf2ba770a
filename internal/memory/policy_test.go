package memory

import "testing"

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	p := Policy{MaxPercent: 400, MinPercent: 50, Headroom: 256 * mib}
	tests := []struct {
		name string
		p    Policy
		live int64
		want int
	}{
		{name: "nothing live yet", p: p, live: 0, want: 400},
		{name: "small heap: the most", p: p, live: 32 * mib, want: 400},
		{name: "headroom is the most", p: p, live: 64 * mib, want: 400},
		{name: "headroom between the bounds", p: p, live: 256 * mib, want: 100},
		{name: "headroom between the bounds, rounded down", p: p, live: 400 * mib, want: 64},
		{name: "headroom is the least", p: p, live: 512 * mib, want: 50},
		{name: "large heap: the least", p: p, live: 4096 * mib, want: 50},
		{name: "no headroom: always the most", p: Policy{MaxPercent: 400, MinPercent: 50}, live: 4096 * mib, want: 400},
		{name: "min equals max", p: Policy{MaxPercent: 100, MinPercent: 100, Headroom: 256 * mib}, live: 32 * mib, want: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Percent(tt.live); got != tt.want {
				t.Errorf("Percent(%d MiB) = %d, want %d", tt.live/mib, got, tt.want)
			}
		})
	}
}
