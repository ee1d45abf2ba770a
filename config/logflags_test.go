package config

import "testing"

func TestGlogCheck(t *testing.T) {
	tests := []struct {
		name    string
		g       Glog
		wantErr bool
	}{
		{"defaults", Glog{StderrThreshold: "2"}, false},
		{"threshold by name", Glog{StderrThreshold: "warning"}, false},
		{"bad threshold", Glog{StderrThreshold: "4"}, true},
		{"negative v", Glog{StderrThreshold: "2", Verbosity: -1}, true},
		{"book's vmodule", Glog{StderrThreshold: "2", VModule: "gfs*=2,test*=4"}, false},
		{"vmodule without level", Glog{StderrThreshold: "2", VModule: "gfs*"}, true},
		{"vmodule bad pattern", Glog{StderrThreshold: "2", VModule: "[=2"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.g.Check(); (err != nil) != tt.wantErr {
				t.Fatalf("Check() = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

func TestVModuleMatches(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		file    string
		want    bool
	}{
		{"file name", "decide", "/src/actors/replication/decide.go", true},
		{"glob", "dec*", "/src/actors/replication/decide.go", true},
		{"other file", "actor", "/src/actors/replication/decide.go", false},
		{"path end", "replication/*", "/src/actors/replication/decide.go", true},
		{"path of another package", "node/*", "/src/actors/replication/decide.go", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (VModule{Pattern: tt.pattern, Level: 2}).Matches(tt.file); got != tt.want {
				t.Fatalf("Matches = %v, want %v", got, tt.want)
			}
		})
	}
}
