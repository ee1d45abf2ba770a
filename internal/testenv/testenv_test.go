package testenv

import "testing"

func TestPositiveInt(t *testing.T) {
	tests := []struct {
		name, value string
		want        int
	}{
		{name: "unset: the default", value: "", want: 7},
		{name: "a positive integer", value: "30000", want: 30000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUBEACTOR_TESTENV", tt.value)
			if got := PositiveInt(t, "KUBEACTOR_TESTENV", 7); got != tt.want {
				t.Fatalf("PositiveInt = %d, want %d", got, tt.want)
			}
		})
	}
}
