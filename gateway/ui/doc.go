// Package ui is the dashboard served at /ui: pages of nodes, pods, replication
// controllers, services and events, kept live by the browser through the API's own
// lists and watches. Its HTML, CSS and JavaScript are embedded in the binary; it
// fetches nothing from anywhere but the server that serves it, and holds no state.
package ui
