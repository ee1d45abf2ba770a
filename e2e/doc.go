// Package e2e starts the real kubeactor binary and drives it with the tools people
// use: the installed kubectl and client-go. Each test owns its server and data
// directory and cleans up; nothing here sleeps to wait, it polls with a deadline.
package e2e
