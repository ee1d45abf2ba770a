package e2e

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkDockerPodStartupVolumes measures pod startup latency (create request to
// every container running, image present) of a pod with one volume, one pod at a
// time: emptyDir, a gitRepo cloned from a local repository (file://), a
// downwardAPI volume, and a persistentVolumeClaim bound (beforehand) to a hostPath
// PersistentVolume, side by side. The claim's pods wait for the scheduler's
// VolumeClaimsBound check and the agent's resolution of the claim to its volume.
func BenchmarkDockerPodStartupVolumes(b *testing.B) {
	n := startDockerNode(b, privatePorts...)
	repo := gitRepoForTest(b, "bench")
	ctx := context.Background()
	n.create(fmt.Sprintf(claimVolumeDocs, b.TempDir()))
	Eventually(b, 30*time.Second, "claim data Bound", func() error {
		c, err := n.cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c.Status.Phase != corev1.ClaimBound {
			return fmt.Errorf("phase %s", c.Status.Phase)
		}
		return nil
	})
	sources := []struct {
		name string
		src  corev1.VolumeSource
	}{
		{"emptydir", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{"gitrepo", corev1.VolumeSource{GitRepo: &corev1.GitRepoVolumeSource{Repository: "file://" + repo, Directory: "."}}},
		{"downwardapi", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}},
		{"claim", corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
	}
	for i := 0; i < b.N; i++ {
		seen := n.watchRunning(b)
		for _, s := range sources {
			var ds []time.Duration
			for j := 0; j < 10; j++ {
				name := fmt.Sprintf("%s-%d-%d", s.name, i, j)
				pod := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "bench"}},
					Spec: corev1.PodSpec{
						Containers: []corev1.Container{{Name: "app", Image: imageTestServer, ImagePullPolicy: corev1.PullIfNotPresent,
							VolumeMounts: []corev1.VolumeMount{{Name: "v", MountPath: "/v"}}}},
						Volumes: []corev1.Volume{{Name: "v", VolumeSource: s.src}},
					},
				}
				start := time.Now()
				if _, err := n.cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
				select {
				case at := <-seen.wait(name):
					ds = append(ds, at.Sub(start))
				case <-time.After(60 * time.Second):
					b.Fatalf("%s not running after 60s: %s", name, n.events(name))
				}
			}
			sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
			b.ReportMetric(ms(percentile(ds, 0.5)), s.name+"-p50-ms")
			b.ReportMetric(ms(percentile(ds, 0.99)), s.name+"-p99-ms")
		}
		zero := int64(0)
		_ = n.cs.CoreV1().Pods("default").DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		Eventually(b, 120*time.Second, "pods removed", func() error {
			if names := n.dockerPS(true); len(names) > 0 {
				return fmt.Errorf("%d containers left", len(names))
			}
			return nil
		})
	}
}
