package service

import "math/bits"

// bitmap is a set of offsets in [0, size), one bit each.
type bitmap struct {
	words []uint64
	size  int
	count int
}

func newBitmap(size int) bitmap { return bitmap{words: make([]uint64, (size+63)/64), size: size} }

func (b *bitmap) has(i int) bool { return b.words[i/64]&(1<<(i%64)) != 0 }

// set marks i, reporting whether it was free.
func (b *bitmap) set(i int) bool {
	if b.has(i) {
		return false
	}
	b.words[i/64] |= 1 << (i % 64)
	b.count++
	return true
}

func (b *bitmap) clear(i int) {
	if b.has(i) {
		b.words[i/64] &^= 1 << (i % 64)
		b.count--
	}
}

func (b bitmap) clone() bitmap {
	b.words = append([]uint64(nil), b.words...)
	return b
}

// firstFree returns the first clear offset in [from, to), or -1. It looks at a word
// (64 offsets) at a time.
func (b *bitmap) firstFree(from, to int) int {
	for i := from; i < to; {
		w := ^b.words[i/64] >> (i % 64) // free bits from i on, within the word
		if w != 0 {
			if j := i + bits.TrailingZeros64(w); j < to {
				return j
			}
			return -1
		}
		i = (i/64 + 1) * 64
	}
	return -1
}

// freeFrom returns the first clear offset at or after start in [lo, size), wrapping
// round to lo; -1 when there is none.
func (b *bitmap) freeFrom(start, lo int) int {
	if j := b.firstFree(start, b.size); j >= 0 {
		return j
	}
	return b.firstFree(lo, start)
}
