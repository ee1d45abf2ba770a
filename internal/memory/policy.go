package memory

// Policy says how far the heap may grow past the live heap before the next
// collection. The stored objects make a large, steady live heap, and the cost of a
// collection grows with it, so collecting seldom saves CPU; but the heap may grow
// to (1 + GOGC/100) times the live heap, and at GOGC 400 that is five times. So the
// growth allowed is Headroom bytes, at most MaxPercent of the live heap (a small
// server collects as seldom as GOGC=MaxPercent lets it) and at least MinPercent of
// it (a large one still collects no more often than GOGC=MinPercent makes it).
type Policy struct {
	MaxPercent int   // GOGC while Headroom is more than this share of the live heap
	MinPercent int   // GOGC once Headroom is less than this share of the live heap
	Headroom   int64 // bytes the heap may grow past the live heap between those bounds
	Limit      int64 // soft limit on the runtime's memory (debug.SetMemoryLimit); 0 for none
}

// Percent is the GC percent (GOGC) for a live heap of live bytes.
func (p Policy) Percent(live int64) int {
	if live <= 0 || p.Headroom <= 0 {
		return p.MaxPercent
	}
	// Headroom*100 overflows only past 92 PB; live is at least one byte.
	pct := p.Headroom * 100 / live
	return int(max(int64(p.MinPercent), min(int64(p.MaxPercent), pct)))
}
