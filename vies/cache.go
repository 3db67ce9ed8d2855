package vies

import (
	"container/list"
	"sync"
	"time"
)

// cache holds definitive answers (valid, invalid) until they expire, least
// recently used first out when full. Unavailable answers never enter it.
type cache struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *cacheEntry, most recently used at the front
	items map[string]*list.Element
}

type cacheEntry struct {
	key     string
	r       Result
	expires time.Time
}

func newCache(max int) *cache {
	return &cache{max: max, order: list.New(), items: make(map[string]*list.Element)}
}

// get returns the stored answer for key, marked Cached, if it has not
// expired at now.
func (c *cache) get(key string, now time.Time) (Result, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return Result{}, false
	}
	e := el.Value.(*cacheEntry)
	if !now.Before(e.expires) {
		c.order.Remove(el)
		delete(c.items, key)
		return Result{}, false
	}
	c.order.MoveToFront(el)
	r := e.r
	r.Cached = true
	return r, true
}

// put stores r for key until expires, evicting the least recently used
// entry when the cache is full.
func (c *cache) put(key string, r Result, expires time.Time) {
	if r.Status == StatusUnavailable || c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		el.Value = &cacheEntry{key: key, r: r, expires: expires}
		c.order.MoveToFront(el)
		return
	}
	for c.order.Len() >= c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*cacheEntry).key)
	}
	c.items[key] = c.order.PushFront(&cacheEntry{key: key, r: r, expires: expires})
}

// len is the number of stored entries, expired or not.
func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
