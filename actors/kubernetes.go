package actors

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/service"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
)

// EnsureKubernetesService creates, or brings up to date, the default/kubernetes
// service (the first address of the cluster IP range, port 443) and its endpoints,
// which point at server, the API server's address. The server calls it once it
// listens (its port may only be known then).
func (s *System) EnsureKubernetesService(ctx context.Context, server netip.AddrPort) error {
	ips, err := service.NewIPs(s.env.services.ClusterIPRange)
	if err != nil {
		return fmt.Errorf("kubernetes service: %w", err)
	}
	port := int32(server.Port())
	svc := service.KubernetesService(ips.Kubernetes(), port)
	eps := service.KubernetesEndpoints(server.Addr().Unmap(), port)
	if err := s.ensureService(ctx, svc, eps); err != nil {
		return fmt.Errorf("kubernetes service: %w", err)
	}
	return nil
}

// EnsureKubeDNSService creates, or brings up to date, the kube-system/kube-dns service
// (the --cluster-dns address, Options.Services.ClusterDNS, port 53 over UDP and TCP)
// and its endpoints, which point at dns, the address the server answers DNS on. A
// stored kube-dns with another cluster IP (the flag changed) is replaced.
func (s *System) EnsureKubeDNSService(ctx context.Context, dns netip.AddrPort) error {
	ip := s.env.services.ClusterDNS
	if !ip.IsValid() {
		return errors.New("kube-dns service: no cluster DNS address configured")
	}
	svc := service.KubeDNSService(ip, int32(dns.Port()))
	key := persistence.Key{Resource: "services", Namespace: service.KubeDNSNamespace, Name: service.KubeDNSName}
	if it, err := s.env.store.Get(key); err == nil {
		if cur, ok := it.Object().(*corev1.Service); ok && cur.Spec.ClusterIP != svc.Spec.ClusterIP {
			if _, _, err := s.Delete(ctx, key, DeleteOptions{Preconditions: command.Preconditions{UID: cur.UID}}); err != nil {
				return fmt.Errorf("kube-dns service: replace %s: %w", cur.Spec.ClusterIP, err)
			}
		}
	}
	eps := service.KubeDNSEndpoints(dns.Addr().Unmap(), int32(dns.Port()))
	if err := s.ensureService(ctx, svc, eps); err != nil {
		return fmt.Errorf("kube-dns service: %w", err)
	}
	return nil
}

// ensureService creates, or brings up to date, a service the server owns and its
// endpoints (the service has no selector: nobody else writes them).
func (s *System) ensureService(ctx context.Context, svc *corev1.Service, eps *corev1.Endpoints) error {
	key := persistence.Key{Resource: "services", Namespace: svc.Namespace, Name: svc.Name}
	err := s.ensure(ctx, key, svc, func(cur runtime.Object) runtime.Object {
		c, ok := cur.(*corev1.Service)
		if !ok || (equality.Semantic.DeepEqual(c.Spec.Ports, svc.Spec.Ports) && equality.Semantic.DeepEqual(c.Labels, svc.Labels)) {
			return nil
		}
		next := c.DeepCopy()
		next.Spec.Ports, next.Labels = svc.Spec.Ports, svc.Labels
		return next
	})
	if err != nil {
		return err
	}
	key = persistence.Key{Resource: "endpoints", Namespace: eps.Namespace, Name: eps.Name}
	err = s.ensure(ctx, key, eps, func(cur runtime.Object) runtime.Object {
		c, ok := cur.(*corev1.Endpoints)
		if !ok || !service.Changed(c, eps) {
			return nil
		}
		next := c.DeepCopy()
		next.Subsets, next.Labels = eps.Subsets, eps.Labels
		return next
	})
	if err != nil {
		return fmt.Errorf("endpoints: %w", err)
	}
	return nil
}

// ensure creates want at key, or, when an object is stored there, updates it to what
// change returns (nil: nothing to change).
func (s *System) ensure(ctx context.Context, key persistence.Key, want runtime.Object, change func(cur runtime.Object) runtime.Object) error {
	ctx = WithBootstrap(ctx)
	it, err := s.env.store.Get(key)
	switch {
	case errors.Is(err, persistence.ErrNotFound):
		if err := prepareNew(key.Resource, want, s.env.now()); err != nil {
			return err
		}
		_, err := s.Create(ctx, key, want)
		return err
	case err != nil:
		return err
	}
	next := change(it.Object())
	if next == nil {
		return nil
	}
	m, ok := it.Object().(metav1.Object)
	if !ok {
		return fmt.Errorf("%T has no metadata", it.Object())
	}
	_, err = s.Update(ctx, key, next, command.Preconditions{UID: m.GetUID(), ResourceVersion: it.Revision})
	return err
}
