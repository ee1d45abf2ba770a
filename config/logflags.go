package config

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Glog holds the book's logging flags (Table 4.1), which every component accepts.
// They are honoured on top of logrus: --v raises --log-level, --log-dir writes the
// component's log file. See docs/operations.md.
type Glog struct {
	LogToStderr     bool   `name:"logtostderr" default:"true" help:"Log to stderr instead of a file in --log-dir."`
	AlsoLogToStderr bool   `name:"alsologtostderr" help:"With --logtostderr=false, log to stderr as well as to the file."`
	LogDir          string `name:"log-dir" help:"With --logtostderr=false, directory of the log file (default: the temporary directory), named <component>.<host>.<user>.log.INFO.<yyyymmdd-hhmmss>.<pid> with the link <component>.INFO."`
	Verbosity       int    `name:"v" default:"0" help:"Verbosity, glog's: 0 keeps --log-level (info by default), 1 to 3 debug, 4 and more trace; it never lowers --log-level."`
	VModule         string `name:"vmodule" help:"Verbosity per source file (pattern=N,...; the pattern matches the file's name without .go, or its path when it has a /)."`
	StderrThreshold string `name:"stderrthreshold" default:"2" help:"With --logtostderr=false, entries at or above this severity also go to stderr (0 or INFO, 1 or WARNING, 2 or ERROR, 3 or FATAL)."`
	PrintVersion    bool   `name:"version" help:"Print the version and exit."`
}

// Severity is a glog severity: 0 INFO, 1 WARNING, 2 ERROR, 3 FATAL.
type Severity int

// VModule is one --vmodule pattern and its verbosity.
type VModule struct {
	Pattern string
	Level   int
}

// Threshold parses --stderrthreshold.
func (g Glog) Threshold() (Severity, error) {
	names := []string{"INFO", "WARNING", "ERROR", "FATAL"}
	for i, n := range names {
		if strings.EqualFold(g.StderrThreshold, n) || g.StderrThreshold == strconv.Itoa(i) {
			return Severity(i), nil
		}
	}
	return 0, fmt.Errorf("--stderrthreshold %q: want 0 to 3 or INFO, WARNING, ERROR, FATAL", g.StderrThreshold)
}

// Modules parses --vmodule.
func (g Glog) Modules() ([]VModule, error) {
	var ms []VModule
	for _, part := range strings.Split(g.VModule, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		pat, lvl, ok := strings.Cut(part, "=")
		n, err := strconv.Atoi(lvl)
		if _, perr := filepath.Match(pat, ""); !ok || pat == "" || err != nil || n < 0 || perr != nil {
			return nil, fmt.Errorf("--vmodule %q: want pattern=N[,pattern=N...]", g.VModule)
		}
		ms = append(ms, VModule{Pattern: pat, Level: n})
	}
	return ms, nil
}

// Check reports the first invalid logging flag.
func (g Glog) Check() error {
	if g.Verbosity < 0 {
		return fmt.Errorf("--v %d: must not be negative", g.Verbosity)
	}
	if _, err := g.Threshold(); err != nil {
		return err
	}
	_, err := g.Modules()
	return err
}

// Matches tells whether a --vmodule pattern matches a source file's path: its name
// without .go, or, for a pattern with a /, the path's end.
func (m VModule) Matches(file string) bool {
	f := strings.TrimSuffix(file, ".go")
	if !strings.Contains(m.Pattern, "/") {
		ok, _ := filepath.Match(m.Pattern, filepath.Base(f))
		return ok
	}
	for {
		if ok, _ := filepath.Match(m.Pattern, f); ok {
			return true
		}
		i := strings.Index(f, "/")
		if i < 0 {
			return false
		}
		f = f[i+1:]
	}
}
