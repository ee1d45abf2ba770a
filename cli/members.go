package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubeactor/kubeactor/gateway"
)

// membersCmd lists the master replicas (`kubeactor members`) and removes one
// (`kubeactor members remove NAME`), through GET and DELETE /kubeactor/v1/members.
type membersCmd struct {
	List   membersListCmd   `cmd:"" default:"withargs" help:"List the master replicas: name, peer and API addresses, role, applied revision, last contact."`
	Remove membersRemoveCmd `cmd:"" help:"Remove a master replica from the cluster (through the leader)."`
}

type membersListCmd struct {
	clientFlags
	Output string `short:"o" name:"output" default:"" enum:",json,wide" help:"Output format: json, or wide (the secure API too)."`
}

func (c *membersListCmd) Run(g *globals) error {
	return report(g.stderr, c.run(context.Background(), g.stdout, time.Now()))
}

func (c *membersListCmd) run(ctx context.Context, out io.Writer, now time.Time) error {
	cn, err := c.connect()
	if err != nil {
		return err
	}
	raw, err := doRaw(ctx, cn.rest.Get().AbsPath("/kubeactor/v1/members"))
	if err != nil {
		return fmt.Errorf("list members: %w", err)
	}
	var list gateway.MemberList
	if err := json.Unmarshal(raw, &list); err != nil {
		return fmt.Errorf("list members: %w", err)
	}
	return printMembers(out, list, c.Output, now)
}

// printMembers prints the member list as a table (kubectl's style) or as JSON.
func printMembers(out io.Writer, list gateway.MemberList, format string, now time.Time) error {
	if format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "    ")
		return enc.Encode(list)
	}
	w := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
	header := "NAME\tPEER\tAPI\tROLE\tREVISION\tLAST-CONTACT"
	if format == "wide" {
		header += "\tSECURE-API\tREACHABLE"
	}
	fmt.Fprintln(w, header)
	for _, m := range list.Items {
		api := m.Meta[gateway.MetaAPI]
		if api == "" {
			api = "<none>"
		}
		contact := "<none>"
		if m.LastContact != nil {
			contact = duration.HumanDuration(now.Sub(*m.LastContact)) + " ago"
		}
		name := m.Name
		if name == "" {
			name = "<none>"
		}
		peer := m.PeerAddress
		if peer == "" {
			peer = "<none>"
		}
		row := []string{name, peer, api, m.Role, fmt.Sprint(m.Revision), contact}
		if format == "wide" {
			secure := m.Meta[gateway.MetaSecureAPI]
			if secure == "" {
				secure = "<none>"
			}
			row = append(row, secure, fmt.Sprint(m.Reachable))
		}
		fmt.Fprintln(w, strings.Join(row, "\t"))
	}
	return w.Flush()
}

type membersRemoveCmd struct {
	clientFlags
	Name string `arg:"" help:"The replica's name (its --name)."`
}

func (c *membersRemoveCmd) Run(g *globals) error {
	return report(g.stderr, c.run(context.Background(), g.stdout))
}

func (c *membersRemoveCmd) run(ctx context.Context, out io.Writer) error {
	cn, err := c.connect()
	if err != nil {
		return err
	}
	res := cn.rest.Delete().AbsPath("/kubeactor/v1/members", c.Name).Do(ctx)
	var code int
	res.StatusCode(&code)
	if err := res.Error(); err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("remove member %s: %d", c.Name, code)
	}
	_, err = fmt.Fprintf(out, "member %q removed\n", c.Name)
	return err
}
