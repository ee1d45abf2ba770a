package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// chunked frames the given chunks as an HTTP/1.1 chunked body.
func chunked(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		fmt.Fprintf(&b, "%x\r\n%s\r\n", len(c), c)
	}
	b.WriteString("0\r\n\r\n")
	return b.String()
}

func TestChunkLines(t *testing.T) {
	long := strings.Repeat("x", 100) + "\n"
	for _, tt := range []struct {
		name   string
		body   string
		buffer int
		want   []string
	}{
		{"lines within chunks", chunked("a\nbb\n", "ccc\n"), 64, []string{"a\n", "bb\n", "ccc\n"}},
		{"a line across two chunks", chunked("a\nb", "b\nc\n"), 64, []string{"a\n", "bb\n", "c\n"}},
		{"a line across three chunks", chunked("a", "b", "c\n"), 64, []string{"abc\n"}},
		{"a line longer than the buffer", chunked(long[:60], long[60:]), 16, []string{long}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &chunkLines{r: bufio.NewReaderSize(strings.NewReader(tt.body), tt.buffer)}
			var got []string
			for {
				line, err := c.ReadSlice('\n')
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(line))
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("lines %q, want %q", got, tt.want)
			}
		})
	}
}
