package scheduler

import (
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// Amounts a container that sets no cpu or memory counts for in the priorities
// (v1.0 getNonzeroLimits). The predicates count such a container as 0; an explicit 0
// stays 0 everywhere.
const (
	DefaultMilliCPU int64 = 100
	DefaultMemory   int64 = 200 * 1024 * 1024
)

// usage is what one pod adds to its node. NodeInfo keeps it per pod so that removing
// the pod subtracts exactly what adding it added.
type usage struct {
	milliCPU, memory     int64
	nzMilliCPU, nzMemory int64
	ports                []hostPort
	disks                []disk
}

func (u usage) equal(o usage) bool {
	return u.milliCPU == o.milliCPU && u.memory == o.memory && u.nzMilliCPU == o.nzMilliCPU && u.nzMemory == o.nzMemory &&
		slices.Equal(u.ports, o.ports) && slices.EqualFunc(u.disks, o.disks, func(a, b disk) bool {
		return a.key == b.key && a.readOnly == b.readOnly && slices.Equal(a.monitors, b.monitors)
	})
}

// hostPort is protocol<<16 | port.
type hostPort uint32

func makeHostPort(proto corev1.Protocol, port int32) hostPort {
	var p uint32
	switch proto {
	case corev1.ProtocolUDP:
		p = 1
	case corev1.ProtocolSCTP:
		p = 2
	}
	return hostPort(p<<16 | uint32(port)&0xffff)
}

type disk struct {
	key      string // kind/id: gce/<pdName>, ebs/<volumeID>, rbd/<pool>/<image>
	readOnly bool
	monitors []string // rbd only
}

// containerAmount is what a container asks for: its request, or its limit when it
// sets no request (the API defaults requests to limits; v1.0 read limits).
func containerAmount(r *corev1.ResourceRequirements, name corev1.ResourceName) (int64, bool) {
	q, ok := r.Requests[name]
	if !ok {
		q, ok = r.Limits[name]
	}
	if !ok {
		return 0, false
	}
	if name == corev1.ResourceCPU {
		return q.MilliValue(), true
	}
	return q.Value(), true
}

// podUsage sums the pod's containers; an init container runs alone, so the pod needs
// the larger of the sum and its largest init container.
func podUsage(pod *corev1.Pod) usage {
	var u usage
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cpu, mem, nzCPU, nzMem := containerUsage(&c.Resources)
		u.milliCPU += cpu
		u.memory += mem
		u.nzMilliCPU += nzCPU
		u.nzMemory += nzMem
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				u.ports = append(u.ports, makeHostPort(p.Protocol, p.HostPort))
			}
		}
	}
	for i := range pod.Spec.InitContainers {
		cpu, mem, nzCPU, nzMem := containerUsage(&pod.Spec.InitContainers[i].Resources)
		u.milliCPU = max(u.milliCPU, cpu)
		u.memory = max(u.memory, mem)
		u.nzMilliCPU = max(u.nzMilliCPU, nzCPU)
		u.nzMemory = max(u.nzMemory, nzMem)
	}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		switch {
		case v.GCEPersistentDisk != nil:
			u.disks = append(u.disks, disk{key: "gce/" + v.GCEPersistentDisk.PDName, readOnly: v.GCEPersistentDisk.ReadOnly})
		case v.AWSElasticBlockStore != nil:
			u.disks = append(u.disks, disk{key: "ebs/" + v.AWSElasticBlockStore.VolumeID, readOnly: v.AWSElasticBlockStore.ReadOnly})
		case v.RBD != nil:
			pool := v.RBD.RBDPool
			if pool == "" {
				pool = "rbd"
			}
			u.disks = append(u.disks, disk{key: "rbd/" + pool + "/" + v.RBD.RBDImage, readOnly: v.RBD.ReadOnly, monitors: v.RBD.CephMonitors})
		}
	}
	return u
}

func containerUsage(r *corev1.ResourceRequirements) (cpu, mem, nzCPU, nzMem int64) {
	cpu, ok := containerAmount(r, corev1.ResourceCPU)
	nzCPU = cpu
	if !ok {
		nzCPU = DefaultMilliCPU
	}
	mem, ok = containerAmount(r, corev1.ResourceMemory)
	nzMem = mem
	if !ok {
		nzMem = DefaultMemory
	}
	return cpu, mem, nzCPU, nzMem
}

// conflicts reports whether mounting d clashes with a mount already on the node:
// a GCE PD may be shared only when both mounts are read-only, an EBS volume never,
// an RBD image only read-only or through disjoint monitors.
func (d *disk) conflicts(m *diskMount) bool {
	switch d.key[:3] {
	case "ebs":
		return true
	case "rbd":
		return !(d.readOnly && m.readOnly) && overlap(d.monitors, m.monitors)
	default:
		return !(d.readOnly && m.readOnly)
	}
}

func overlap(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

type labelPair struct{ key, value string }

// sortedPairs turns a label map into pairs in key order, so that checks over it are
// deterministic and allocation-free.
func sortedPairs(m map[string]string) []labelPair {
	if len(m) == 0 {
		return nil
	}
	ps := make([]labelPair, 0, len(m))
	for k, v := range m {
		ps = append(ps, labelPair{k, v})
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].key < ps[j].key })
	return ps
}
