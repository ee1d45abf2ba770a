// Package config holds the typed configuration of every kubeactor component, its
// defaults and its validation. It is the one place that reads flags, files and the
// environment (through kong tags); it starts nothing.
package config
