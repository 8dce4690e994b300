package driverhost

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Remote hosts' drivers.
const (
	// SourceRemote is the Source of a phone host's driver: the driver
	// contract served over a host's link (package gateway/remote).
	SourceRemote = "remote"
	// RemotePrefix begins the driver name of a phone host: "host:NAME".
	RemotePrefix = "host:"
	// StateLinked: the host's link is open and its devices are listed.
	StateLinked State = "linked"
	// StateUnlinked: the host's link is gone; its devices are offline, and
	// they come back under the same ids when the host links again.
	StateUnlinked State = "unlinked"
)

// AddRemote registers the link of phone host name, whose driver contract
// c serves, until gone is closed: its devices are listed like a local
// driver's, under the driver name RemotePrefix+name, with Device.Host set.
// It returns at once (the host's device list is read in the background)
// and may be called again with a new link of the same name: the driver
// entry, its handles and its devices' ids stay, and the older link's
// devices are taken over by the newer one.
//
// When the link is gone, calls in flight fail with sdk.ErrDriverGone (the
// gateway tells an agent whose action was under way that its outcome is
// uncertain), the devices go offline, as when a local driver exits, and the
// host is shown unlinked since then; nothing restarts it: the host dials
// again.
func (h *Host) AddRemote(name string, c *sdk.Client, gone <-chan struct{}) {
	key := RemotePrefix + name
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return
	}
	d, ok := h.drivers[key]
	if !ok {
		d = h.newDriverLocked(key)
		d.source, d.host = SourceRemote, name
	}
	d.session++ // events of an older link are ignored from here on
	session := d.session
	d.state, d.lastErr = StateStarting, ""
	h.remotes.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.remotes.Done()
		d.link(c, gone, session)
	}()
}

// link serves one link of a remote driver until it is gone or the host
// stops.
func (d *driver) link(c *sdk.Client, gone <-chan struct{}, session uint64) {
	h := d.h
	ctx, cancel := context.WithCancel(h.stopCtx)
	defer cancel()
	go func() {
		select {
		case <-gone:
			cancel()
		case <-ctx.Done():
		}
	}()
	t0 := time.Now()
	ictx, icancel := context.WithTimeout(ctx, h.cfg.StartTimeout)
	info, err := c.Info(ictx)
	icancel()
	if err != nil {
		d.unlinked(session, "the host's driver did not describe itself: "+err.Error())
		return
	}
	h.mu.Lock()
	if d.session != session {
		h.mu.Unlock()
		return
	}
	d.info, d.startedAt = info, t0
	h.mu.Unlock()
	synced, watchDone := make(chan struct{}), make(chan struct{})
	go d.watch(ctx, c, session, synced, watchDone)
	t := time.NewTimer(h.cfg.StartTimeout)
	select {
	case <-synced:
	case <-ctx.Done():
	case <-t.C:
		d.log.Warn("phone host has not listed its devices in time; serving without", "timeout", h.cfg.StartTimeout)
	}
	t.Stop()
	h.mu.Lock()
	if d.session == session && ctx.Err() == nil {
		d.client.Store(c)
		d.state, d.misses, d.unlinkedAt = StateLinked, nil, time.Time{}
		d.log.Info("phone host linked", "version", info.Version, "startup", time.Since(t0).Round(time.Millisecond))
	}
	h.mu.Unlock()
	<-ctx.Done()
	d.client.CompareAndSwap(c, nil)
	d.unlinked(session, "the host's link is gone")
	<-watchDone
}

// unlinked marks the devices of a link offline, unless a newer link took
// over.
func (d *driver) unlinked(session uint64, msg string) {
	h := d.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if d.session != session {
		return
	}
	d.session++
	h.offlineLocked(d)
	d.startedAt = time.Time{}
	d.unlinkedAt = time.Now()
	if h.stopped {
		d.state = StateStopped
	} else {
		d.state = StateUnlinked
		d.lastErr = msg
		d.log.Warn("phone host unlinked; its phones are offline until it links again", "why", msg)
	}
}

// bare is the driver's own id of a device the host lists under deviceID:
// a phone host's device whose id clashed is listed as NAME/ID, and its
// driver knows it as ID.
func (h *handle) bare(deviceID string) string {
	if p := h.d.host; p != "" {
		if id, ok := strings.CutPrefix(deviceID, p+"/"); ok {
			return id
		}
	}
	return deviceID
}

// qualifiedLocked returns the id under which d lists its device id: the
// id itself, or, for a phone host's device whose id another driver listed
// first, NAME/ID. h.mu is held.
func (h *Host) qualifiedLocked(d *driver, id string) string {
	if d.host == "" {
		return id
	}
	for key, e := range h.devices {
		if key.driver != d.name && (e.dev.ID == id || key.id == id) {
			return d.host + "/" + id
		}
	}
	return id
}

// RemoveRemote forgets phone host name, whose pairing was revoked: its
// devices are removed (one EventRemoved each) and so is its driver entry.
// It reports whether the host was known. A link still open fails its
// calls with sdk.ErrDriverGone.
func (h *Host) RemoveRemote(name string) bool {
	key := RemotePrefix + name
	h.mu.Lock()
	defer h.mu.Unlock()
	d, ok := h.drivers[key]
	if !ok {
		return false
	}
	d.session++ // the link's goroutine and watch change nothing from here on
	d.client.Store(nil)
	var gone []devKey
	for k := range h.devices {
		if k.driver == key {
			gone = append(gone, k)
		}
	}
	slices.SortFunc(gone, func(a, b devKey) int { return cmp.Compare(h.devices[a].seq, h.devices[b].seq) })
	for _, k := range gone {
		e := h.devices[k]
		delete(h.devices, k)
		h.publishLocked(EventRemoved, e)
	}
	delete(h.drivers, key)
	d.log.Info("phone host removed")
	return true
}
