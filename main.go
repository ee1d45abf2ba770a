// Command kubeactor is the whole system in one binary: server, node agent and CLI.
package main

import (
	"os"

	"github.com/kubeactor/kubeactor/cli"
)

func main() { os.Exit(cli.Run(os.Args)) }
