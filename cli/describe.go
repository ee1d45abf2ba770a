package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

type describeCmd struct {
	clientFlags
	Args []string `arg:"" name:"type" help:"TYPE NAME... or TYPE/NAME...: pods, replicationcontrollers, services, nodes, namespaces."`
}

func (c *describeCmd) Run(g *globals) error {
	cs, ns, err := c.clientset()
	if err != nil {
		return report(g.stderr, err)
	}
	return report(g.stderr, c.run(context.Background(), cs, ns, g.stdout))
}

func (c *describeCmd) run(ctx context.Context, cs kubernetes.Interface, ns string, out io.Writer) error {
	reqs, err := parseTypeArgs(c.Args)
	if err != nil {
		return err
	}
	var errs []error
	first := true
	for _, r := range reqs {
		if len(r.Names) == 0 {
			return errors.New("you must specify the name of the resource to describe")
		}
		for _, name := range r.Names {
			text, err := describe(ctx, cs, ns, r.Type, name)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if !first {
				fmt.Fprintln(out)
			}
			first = false
			fmt.Fprint(out, text)
		}
	}
	return errors.Join(errs...)
}

// describe is the description of one object, with its events.
func describe(ctx context.Context, cs kubernetes.Interface, ns, typ, name string) (string, error) {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	var (
		kind string
		meta *metav1.ObjectMeta
	)
	switch strings.ToLower(typ) {
	case "po", "pod", "pods":
		pod, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("get pod %q: %w", name, err)
		}
		kind, meta = "Pod", &pod.ObjectMeta
		describePod(w, pod)
	case "rc", "replicationcontroller", "replicationcontrollers":
		rc, err := cs.CoreV1().ReplicationControllers(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("get replicationcontroller %q: %w", name, err)
		}
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(rc.Spec.Selector).String()})
		if err != nil {
			return "", fmt.Errorf("list pods of replicationcontroller %q: %w", name, err)
		}
		kind, meta = "ReplicationController", &rc.ObjectMeta
		describeRC(w, rc, pods.Items)
	case "svc", "service", "services":
		svc, err := cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("get service %q: %w", name, err)
		}
		eps, err := cs.CoreV1().Endpoints(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			eps = nil // a service may have no endpoints yet
		}
		kind, meta = "Service", &svc.ObjectMeta
		describeService(w, svc, eps)
	case "no", "node", "nodes":
		node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("get node %q: %w", name, err)
		}
		pods, err := cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", name).String()})
		if err != nil {
			return "", fmt.Errorf("list pods on node %q: %w", name, err)
		}
		kind, meta = "Node", &node.ObjectMeta
		describeNode(w, node, pods.Items)
	case "ns", "namespace", "namespaces":
		n, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("get namespace %q: %w", name, err)
		}
		kind, meta = "Namespace", &n.ObjectMeta
		describeNamespace(w, n)
	default:
		return "", fmt.Errorf("describe does not support %q: pods, replicationcontrollers, services, nodes or namespaces", typ)
	}
	events, err := objectEvents(ctx, cs, kind, meta)
	if err != nil {
		return "", err
	}
	describeEvents(w, events)
	if err := w.Flush(); err != nil {
		return "", fmt.Errorf("format description: %w", err)
	}
	return b.String(), nil
}

// eventSelector selects the events about one object.
func eventSelector(kind string, meta *metav1.ObjectMeta) string {
	terms := []fields.Selector{
		fields.OneTermEqualSelector("involvedObject.kind", kind),
		fields.OneTermEqualSelector("involvedObject.name", meta.Name),
	}
	if meta.Namespace != "" {
		terms = append(terms, fields.OneTermEqualSelector("involvedObject.namespace", meta.Namespace))
	}
	if meta.UID != "" {
		terms = append(terms, fields.OneTermEqualSelector("involvedObject.uid", string(meta.UID)))
	}
	return fields.AndSelectors(terms...).String()
}

// objectEvents lists the events about the object, oldest first.
func objectEvents(ctx context.Context, cs kubernetes.Interface, kind string, meta *metav1.ObjectMeta) ([]corev1.Event, error) {
	ns := meta.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault // events of cluster objects live in default
	}
	list, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: eventSelector(kind, meta)})
	if err != nil {
		return nil, fmt.Errorf("list events of %s %q: %w", strings.ToLower(kind), meta.Name, err)
	}
	var out []corev1.Event
	for _, e := range list.Items { // the field selector again, for servers that ignore it
		o := e.InvolvedObject
		if o.Kind == kind && o.Name == meta.Name && (o.UID == "" || meta.UID == "" || o.UID == meta.UID) {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return eventTime(out[i]).Before(eventTime(out[j])) })
	return out, nil
}

func eventTime(e corev1.Event) time.Time {
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp.Time
	}
	return e.EventTime.Time
}

// timeLayout is the book's (RFC 1123 with a numeric zone).
const timeLayout = time.RFC1123Z

func fmtTime(t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return t.Time.Format(timeLayout)
}

func describeEvents(w io.Writer, events []corev1.Event) {
	if len(events) == 0 {
		fmt.Fprintln(w, "No events.")
		return
	}
	fmt.Fprintln(w, "Events:")
	fmt.Fprintln(w, "  FirstSeen\tLastSeen\tCount\tFrom\tSubobjectPath\tReason\tMessage")
	for _, e := range events {
		from := "{" + e.Source.Component + " " + e.Source.Host + "}"
		fmt.Fprintf(w, "  %s\t%s\t%d\t%s\t%s\t%s\t%s\n", fmtTime(e.FirstTimestamp), fmtTime(e.LastTimestamp), e.Count, from, e.InvolvedObject.FieldPath, e.Reason, strings.TrimSpace(e.Message))
	}
}

// joinMap is k=v,k2=v2 sorted by key, or <none>.
func joinMap(m map[string]string) string {
	if len(m) == 0 {
		return "<none>"
	}
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

func describeMeta(w io.Writer, m *metav1.ObjectMeta, namespaced bool) {
	fmt.Fprintf(w, "Name:\t%s\n", m.Name)
	if namespaced {
		fmt.Fprintf(w, "Namespace:\t%s\n", m.Namespace)
	}
	fmt.Fprintf(w, "Labels:\t%s\n", joinMap(m.Labels))
	fmt.Fprintf(w, "Annotations:\t%s\n", joinMap(m.Annotations))
}

func describePod(w io.Writer, pod *corev1.Pod) {
	describeMeta(w, &pod.ObjectMeta, true)
	images := make([]string, 0, len(pod.Spec.Containers))
	for _, c := range pod.Spec.Containers {
		images = append(images, c.Image)
	}
	fmt.Fprintf(w, "Image(s):\t%s\n", strings.Join(images, ","))
	node := pod.Spec.NodeName
	if node == "" {
		node = "<none>"
	} else if pod.Status.HostIP != "" {
		node += "/" + pod.Status.HostIP
	}
	fmt.Fprintf(w, "Node:\t%s\n", node)
	fmt.Fprintf(w, "Status:\t%s\n", pod.Status.Phase)
	fmt.Fprintf(w, "Reason:\t%s\n", pod.Status.Reason)
	fmt.Fprintf(w, "Message:\t%s\n", pod.Status.Message)
	fmt.Fprintf(w, "IP:\t%s\n", pod.Status.PodIP)
	if ref := metav1.GetControllerOf(pod); ref != nil {
		fmt.Fprintf(w, "Controllers:\t%s/%s\n", ref.Kind, ref.Name)
	}
	fmt.Fprintln(w, "Containers:")
	statuses := map[string]corev1.ContainerStatus{}
	for _, s := range pod.Status.ContainerStatuses {
		statuses[s.Name] = s
	}
	for _, c := range pod.Spec.Containers {
		fmt.Fprintf(w, "  %s:\n", c.Name)
		fmt.Fprintf(w, "    Image:\t%s\n", c.Image)
		if len(c.Resources.Limits) > 0 {
			fmt.Fprintln(w, "    Limits:")
			for _, name := range sortedResourceNames(c.Resources.Limits) {
				q := c.Resources.Limits[name]
				fmt.Fprintf(w, "      %s:\t%s\n", name, q.String())
			}
		}
		s, ok := statuses[c.Name]
		if !ok {
			continue
		}
		switch {
		case s.State.Running != nil:
			fmt.Fprintf(w, "    State:\tRunning\n      Started:\t%s\n", fmtTime(s.State.Running.StartedAt))
		case s.State.Waiting != nil:
			fmt.Fprintf(w, "    State:\tWaiting\n      Reason:\t%s\n", s.State.Waiting.Reason)
		case s.State.Terminated != nil:
			fmt.Fprintf(w, "    State:\tTerminated\n      Exit Code:\t%d\n", s.State.Terminated.ExitCode)
		}
		fmt.Fprintf(w, "    Ready:\t%t\n", s.Ready)
		fmt.Fprintf(w, "    Restart Count:\t%d\n", s.RestartCount)
	}
	if len(pod.Status.Conditions) > 0 {
		fmt.Fprintln(w, "Conditions:")
		fmt.Fprintln(w, "  Type\tStatus")
		for _, c := range pod.Status.Conditions {
			fmt.Fprintf(w, "  %s\t%s\n", c.Type, c.Status)
		}
	}
}

func sortedResourceNames(l corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

// podPhases counts pods by phase: running, waiting (pending), succeeded, failed.
func podPhases(pods []corev1.Pod) (running, waiting, succeeded, failed int) {
	for _, p := range pods {
		switch p.Status.Phase {
		case corev1.PodRunning:
			running++
		case corev1.PodSucceeded:
			succeeded++
		case corev1.PodFailed:
			failed++
		default:
			waiting++
		}
	}
	return
}

func describeRC(w io.Writer, rc *corev1.ReplicationController, pods []corev1.Pod) {
	describeMeta(w, &rc.ObjectMeta, true)
	if rc.Spec.Template != nil {
		images := make([]string, 0, len(rc.Spec.Template.Spec.Containers))
		for _, c := range rc.Spec.Template.Spec.Containers {
			images = append(images, c.Image)
		}
		fmt.Fprintf(w, "Image(s):\t%s\n", strings.Join(images, ","))
	}
	fmt.Fprintf(w, "Selector:\t%s\n", joinMap(rc.Spec.Selector))
	want := int32(1)
	if rc.Spec.Replicas != nil {
		want = *rc.Spec.Replicas
	}
	fmt.Fprintf(w, "Replicas:\t%d current / %d desired\n", rc.Status.Replicas, want)
	r, wt, s, f := podPhases(pods)
	fmt.Fprintf(w, "Pods Status:\t%d Running / %d Waiting / %d Succeeded / %d Failed\n", r, wt, s, f)
}

func describeService(w io.Writer, svc *corev1.Service, eps *corev1.Endpoints) {
	describeMeta(w, &svc.ObjectMeta, true)
	fmt.Fprintf(w, "Selector:\t%s\n", joinMap(svc.Spec.Selector))
	fmt.Fprintf(w, "Type:\t%s\n", svc.Spec.Type)
	fmt.Fprintf(w, "IP:\t%s\n", svc.Spec.ClusterIP)
	for _, p := range svc.Spec.Ports {
		name := p.Name
		if name == "" {
			name = "<unnamed>"
		}
		fmt.Fprintf(w, "Port:\t%s\t%d/%s\n", name, p.Port, p.Protocol)
		if p.NodePort != 0 {
			fmt.Fprintf(w, "NodePort:\t%s\t%d/%s\n", name, p.NodePort, p.Protocol)
		}
	}
	fmt.Fprintf(w, "Endpoints:\t%s\n", formatEndpoints(eps))
	aff := svc.Spec.SessionAffinity
	if aff == "" {
		aff = corev1.ServiceAffinityNone
	}
	fmt.Fprintf(w, "Session Affinity:\t%s\n", aff)
}

// formatEndpoints is ip:port,... of every ready address, or <none>.
func formatEndpoints(eps *corev1.Endpoints) string {
	if eps == nil {
		return "<none>"
	}
	var out []string
	for _, s := range eps.Subsets {
		for _, a := range s.Addresses {
			for _, p := range s.Ports {
				out = append(out, fmt.Sprintf("%s:%d", a.IP, p.Port))
			}
		}
	}
	if len(out) == 0 {
		return "<none>"
	}
	return strings.Join(out, ",")
}

func describeNode(w io.Writer, n *corev1.Node, pods []corev1.Pod) {
	describeMeta(w, &n.ObjectMeta, false)
	fmt.Fprintf(w, "CreationTimestamp:\t%s\n", fmtTime(n.CreationTimestamp))
	fmt.Fprintf(w, "Unschedulable:\t%t\n", n.Spec.Unschedulable)
	if len(n.Status.Conditions) > 0 {
		fmt.Fprintln(w, "Conditions:")
		fmt.Fprintln(w, "  Type\tStatus\tLastHeartbeatTime\tReason\tMessage")
		for _, c := range n.Status.Conditions {
			fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, fmtTime(c.LastHeartbeatTime), c.Reason, c.Message)
		}
	}
	addrs := make([]string, 0, len(n.Status.Addresses))
	for _, a := range n.Status.Addresses {
		addrs = append(addrs, a.Address)
	}
	fmt.Fprintf(w, "Addresses:\t%s\n", strings.Join(addrs, ","))
	if len(n.Status.Capacity) > 0 {
		fmt.Fprintln(w, "Capacity:")
		for _, name := range sortedResourceNames(n.Status.Capacity) {
			q := n.Status.Capacity[name]
			fmt.Fprintf(w, "  %s:\t%s\n", name, q.String())
		}
	}
	fmt.Fprintf(w, "Pods:\t(%d in total)\n", len(pods))
	if len(pods) > 0 {
		fmt.Fprintln(w, "  Namespace\tName")
		sort.Slice(pods, func(i, j int) bool {
			return types.NamespacedName{Namespace: pods[i].Namespace, Name: pods[i].Name}.String() < types.NamespacedName{Namespace: pods[j].Namespace, Name: pods[j].Name}.String()
		})
		for _, p := range pods {
			fmt.Fprintf(w, "  %s\t%s\n", p.Namespace, p.Name)
		}
	}
}

func describeNamespace(w io.Writer, n *corev1.Namespace) {
	describeMeta(w, &n.ObjectMeta, false)
	fmt.Fprintf(w, "Status:\t%s\n", n.Status.Phase)
}
