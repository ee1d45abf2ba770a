package schedtest

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodBuilder builds a pod with one container, "c0", that later calls configure.
type PodBuilder struct{ p *corev1.Pod }

// NewPod starts a pod in namespace default with one container and no resources.
func NewPod(name string) *PodBuilder {
	return &PodBuilder{p: &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c0", Image: "nginx"}}},
	}}
}

func (b *PodBuilder) c() *corev1.Container { return &b.p.Spec.Containers[len(b.p.Spec.Containers)-1] }

// Namespace sets the namespace.
func (b *PodBuilder) Namespace(ns string) *PodBuilder { b.p.Namespace = ns; return b }

// Labels adds labels given as key, value, key, value...
func (b *PodBuilder) Labels(kv ...string) *PodBuilder {
	b.p.Labels = addPairs(b.p.Labels, kv)
	return b
}

// Container adds a container; later resource and port calls configure it.
func (b *PodBuilder) Container(name string) *PodBuilder {
	b.p.Spec.Containers = append(b.p.Spec.Containers, corev1.Container{Name: name, Image: "nginx"})
	return b
}

// CPU sets the current container's cpu request.
func (b *PodBuilder) CPU(q string) *PodBuilder { return b.request(corev1.ResourceCPU, q) }

// Mem sets the current container's memory request.
func (b *PodBuilder) Mem(q string) *PodBuilder { return b.request(corev1.ResourceMemory, q) }

// CPULimit sets the current container's cpu limit only (v1.0 style).
func (b *PodBuilder) CPULimit(q string) *PodBuilder {
	c := b.c()
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	c.Resources.Limits[corev1.ResourceCPU] = resource.MustParse(q)
	return b
}

func (b *PodBuilder) request(name corev1.ResourceName, q string) *PodBuilder {
	c := b.c()
	if c.Resources.Requests == nil {
		c.Resources.Requests = corev1.ResourceList{}
	}
	c.Resources.Requests[name] = resource.MustParse(q)
	return b
}

// HostPort exposes a TCP host port from the current container.
func (b *PodBuilder) HostPort(port int32) *PodBuilder {
	return b.HostPortProto(corev1.ProtocolTCP, port)
}

// HostPortProto exposes a host port with a protocol.
func (b *PodBuilder) HostPortProto(proto corev1.Protocol, port int32) *PodBuilder {
	c := b.c()
	c.Ports = append(c.Ports, corev1.ContainerPort{ContainerPort: port, HostPort: port, Protocol: proto})
	return b
}

// NodeSelector adds node selector entries given as key, value...
func (b *PodBuilder) NodeSelector(kv ...string) *PodBuilder {
	b.p.Spec.NodeSelector = addPairs(b.p.Spec.NodeSelector, kv)
	return b
}

// Node binds the pod (spec.nodeName).
func (b *PodBuilder) Node(name string) *PodBuilder { b.p.Spec.NodeName = name; return b }

// Phase sets status.phase.
func (b *PodBuilder) Phase(p corev1.PodPhase) *PodBuilder { b.p.Status.Phase = p; return b }

// GCEPD mounts a GCE persistent disk.
func (b *PodBuilder) GCEPD(pdName string, readOnly bool) *PodBuilder {
	return b.volume(corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: pdName, ReadOnly: readOnly}})
}

// EBS mounts an AWS EBS volume.
func (b *PodBuilder) EBS(volumeID string, readOnly bool) *PodBuilder {
	return b.volume(corev1.VolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: volumeID, ReadOnly: readOnly}})
}

// RBD mounts a Ceph RBD image.
func (b *PodBuilder) RBD(pool, image string, readOnly bool, monitors ...string) *PodBuilder {
	return b.volume(corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{CephMonitors: monitors, RBDPool: pool, RBDImage: image, ReadOnly: readOnly}})
}

func (b *PodBuilder) volume(src corev1.VolumeSource) *PodBuilder {
	b.p.Spec.Volumes = append(b.p.Spec.Volumes, corev1.Volume{Name: "v" + string(rune('0'+len(b.p.Spec.Volumes))), VolumeSource: src})
	return b
}

// Obj returns the pod.
func (b *PodBuilder) Obj() *corev1.Pod { return b.p }

// NodeBuilder builds a Ready node.
type NodeBuilder struct{ n *corev1.Node }

// NewNode starts a Ready, schedulable node with 4 cpu, 8Gi memory and 40 pods.
func NewNode(name string) *NodeBuilder {
	b := &NodeBuilder{n: &corev1.Node{
		TypeMeta:   metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{
			Capacity:   corev1.ResourceList{},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}}
	return b.CPU("4").Mem("8Gi").Pods(40)
}

// CPU sets the cpu capacity ("" removes it).
func (b *NodeBuilder) CPU(q string) *NodeBuilder { return b.capacity(corev1.ResourceCPU, q) }

// Mem sets the memory capacity ("" removes it).
func (b *NodeBuilder) Mem(q string) *NodeBuilder { return b.capacity(corev1.ResourceMemory, q) }

// Pods sets the pod capacity (0 removes it).
func (b *NodeBuilder) Pods(n int64) *NodeBuilder {
	if n == 0 {
		return b.capacity(corev1.ResourcePods, "")
	}
	b.n.Status.Capacity[corev1.ResourcePods] = *resource.NewQuantity(n, resource.DecimalSI)
	return b
}

func (b *NodeBuilder) capacity(name corev1.ResourceName, q string) *NodeBuilder {
	if q == "" {
		delete(b.n.Status.Capacity, name)
		return b
	}
	b.n.Status.Capacity[name] = resource.MustParse(q)
	return b
}

// Labels adds labels given as key, value...
func (b *NodeBuilder) Labels(kv ...string) *NodeBuilder {
	b.n.Labels = addPairs(b.n.Labels, kv)
	return b
}

// Unschedulable sets spec.unschedulable.
func (b *NodeBuilder) Unschedulable() *NodeBuilder { b.n.Spec.Unschedulable = true; return b }

// NotReady sets the Ready condition to False.
func (b *NodeBuilder) NotReady() *NodeBuilder {
	b.n.Status.Conditions[0].Status = corev1.ConditionFalse
	return b
}

// Obj returns the node.
func (b *NodeBuilder) Obj() *corev1.Node { return b.n }

// NewService returns a service in namespace default selecting the given labels
// (key, value...).
func NewService(name string, selector ...string) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{Kind: "Service", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec:       corev1.ServiceSpec{Selector: addPairs(nil, selector)},
	}
}

// NewRC returns a replication controller in namespace default selecting the given
// labels (key, value...), with one replica of a pod carrying them.
func NewRC(name string, selector ...string) *corev1.ReplicationController {
	one := int32(1)
	return &corev1.ReplicationController{
		TypeMeta:   metav1.TypeMeta{Kind: "ReplicationController", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: corev1.ReplicationControllerSpec{Replicas: &one, Selector: addPairs(nil, selector),
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: addPairs(nil, selector)}}},
	}
}

func addPairs(m map[string]string, kv []string) map[string]string {
	if len(kv)%2 != 0 {
		panic("schedtest: labels need key, value pairs")
	}
	if m == nil && len(kv) > 0 {
		m = map[string]string{}
	}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}
