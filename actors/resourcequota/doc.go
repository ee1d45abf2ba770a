// Package resourcequota is the ResourceQuota kind's own part: the usage of objects
// against a quota, the charge decision the ResourceQuota admission plugin asks a
// quota's actor for, and the quota's controller (status.hard and status.used). It is
// pure: it links no actor runtime and no store.
package resourcequota
