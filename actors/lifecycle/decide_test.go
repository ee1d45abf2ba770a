package lifecycle

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeactor/kubeactor/persistence/command"
)

var now = time.Date(2015, 7, 10, 12, 0, 0, 0, time.UTC)

type cm struct{ c *corev1.ConfigMap }

func obj() *cm                           { return &cm{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", UID: "u1"}}} }
func (b *cm) finalizers(f ...string) *cm { b.c.Finalizers = f; return b }
func (b *cm) deleting(at time.Time, grace int64) *cm {
	ts := metav1.NewTime(at)
	b.c.DeletionTimestamp, b.c.DeletionGracePeriodSeconds = &ts, &grace
	return b
}

func TestDelete(t *testing.T) {
	tests := []struct {
		name      string
		cur       *corev1.ConfigMap
		d         Deletion
		wantErr   error
		wantOp    command.Op
		wantGone  bool
		wantAt    time.Time // deletionTimestamp of the update
		wantGrace int64
	}{
		{name: "missing", cur: nil, wantErr: command.ErrNotFound},
		{name: "at once", cur: obj().c, wantOp: command.OpDelete, wantGone: true},
		{name: "uid mismatch", cur: obj().c, d: Deletion{Pre: command.Preconditions{UID: "u2"}}, wantErr: command.ErrConflict},
		{name: "uid match", cur: obj().c, d: Deletion{Pre: command.Preconditions{UID: "u1", ResourceVersion: 7}}, wantOp: command.OpDelete, wantGone: true},
		{name: "stale resourceVersion", cur: obj().c, d: Deletion{Pre: command.Preconditions{ResourceVersion: 6}}, wantErr: command.ErrConflict},
		{name: "grace marks", cur: obj().c, d: Deletion{Grace: 30}, wantOp: command.OpUpdate, wantAt: now.Add(30 * time.Second), wantGrace: 30},
		{name: "finalizers mark", cur: obj().finalizers("f").c, wantOp: command.OpUpdate, wantAt: now},
		{name: "hold marks", cur: obj().c, d: Deletion{Hold: true}, wantOp: command.OpUpdate, wantAt: now},
		{name: "shorter grace shortens", cur: obj().deleting(now.Add(30*time.Second), 30).c, d: Deletion{Grace: 10}, wantOp: command.OpUpdate, wantAt: now.Add(10 * time.Second), wantGrace: 10},
		{name: "longer grace changes nothing", cur: obj().deleting(now.Add(10*time.Second), 10).c, d: Deletion{Grace: 30}},
		{name: "grace 0 while terminating deletes", cur: obj().deleting(now.Add(10*time.Second), 10).c, wantOp: command.OpDelete, wantGone: true},
		{name: "finalizers while terminating", cur: obj().finalizers("f").deleting(now, 0).c},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var cur *corev1.ConfigMap
			var plan Plan
			var err error
			if tc.cur == nil {
				plan, err = Delete(nil, 7, tc.d, now)
			} else {
				cur = tc.cur
				plan, err = Delete(cur, 7, tc.d, now)
			}
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if plan.Op != tc.wantOp || plan.Gone != tc.wantGone {
				t.Fatalf("plan %+v, want op %d gone %v", plan, tc.wantOp, tc.wantGone)
			}
			if plan.Op != command.OpUpdate {
				return
			}
			next := plan.Object.(*corev1.ConfigMap)
			if next == cur {
				t.Fatal("plan changes the current object in place")
			}
			if !next.DeletionTimestamp.Time.Equal(tc.wantAt) || *next.DeletionGracePeriodSeconds != tc.wantGrace {
				t.Fatalf("marked %v grace %d, want %v grace %d", next.DeletionTimestamp, *next.DeletionGracePeriodSeconds, tc.wantAt, tc.wantGrace)
			}
		})
	}
}

func TestUpdate(t *testing.T) {
	tests := []struct {
		name     string
		cur      *corev1.ConfigMap
		next     *corev1.ConfigMap
		pre      command.Preconditions
		hold     bool
		wantErr  error
		wantOp   command.Op
		wantGone bool
	}{
		{name: "missing", next: obj().c, wantErr: command.ErrNotFound},
		{name: "plain", cur: obj().c, next: obj().c, pre: command.Preconditions{ResourceVersion: 7}, wantOp: command.OpUpdate},
		{name: "stale", cur: obj().c, next: obj().c, pre: command.Preconditions{ResourceVersion: 3}, wantErr: command.ErrConflict},
		{name: "uid change", cur: obj().c, next: func() *corev1.ConfigMap { c := obj().c; c.UID = "u9"; return c }(), wantErr: command.ErrConflict},
		{name: "last finalizer removed", cur: obj().finalizers("f").deleting(now, 0).c, next: obj().c, wantOp: command.OpDelete, wantGone: true},
		{name: "finalizer kept", cur: obj().finalizers("f").deleting(now, 0).c, next: obj().finalizers("f").c, wantOp: command.OpUpdate},
		{name: "within grace", cur: obj().deleting(now.Add(time.Second), 1).c, next: obj().c, wantOp: command.OpUpdate},
		{name: "held", cur: obj().deleting(now, 0).c, next: obj().c, hold: true, wantOp: command.OpUpdate},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var plan Plan
			var err error
			if tc.cur == nil {
				plan, err = Update(nil, 7, tc.next, tc.pre, tc.hold, now)
			} else {
				plan, err = Update(tc.cur, 7, tc.next, tc.pre, tc.hold, now)
			}
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if plan.Op != tc.wantOp || plan.Gone != tc.wantGone {
				t.Fatalf("plan %+v, want op %d gone %v", plan, tc.wantOp, tc.wantGone)
			}
			if plan.Op == command.OpUpdate && tc.cur.DeletionTimestamp != nil && tc.next.DeletionTimestamp == nil {
				t.Fatal("deletion fields not carried over")
			}
		})
	}
}

func TestExpire(t *testing.T) {
	tests := []struct {
		name     string
		cur      *corev1.ConfigMap
		hold     bool
		wantGone bool
	}{
		{name: "not terminating", cur: obj().c},
		{name: "before deadline", cur: obj().deleting(now.Add(time.Second), 1).c},
		{name: "at deadline", cur: obj().deleting(now, 1).c, wantGone: true},
		{name: "finalizer keeps", cur: obj().finalizers("f").deleting(now.Add(-time.Hour), 1).c},
		{name: "hold keeps", cur: obj().deleting(now.Add(-time.Hour), 0).c, hold: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Expire(tc.cur, tc.hold, now); got.Gone != tc.wantGone {
				t.Fatalf("Expire = %+v, want gone %v", got, tc.wantGone)
			}
		})
	}
}

func TestCreate(t *testing.T) {
	if _, err := Create(obj().c, obj().c); !errors.Is(err, command.ErrAlreadyExists) {
		t.Fatalf("create over existing: %v", err)
	}
	if p, err := Create(nil, obj().c); err != nil || p.Op != command.OpCreate {
		t.Fatalf("create: %+v %v", p, err)
	}
}
