//! Features (roads, cities, cloisters, fields) tracked incrementally.
//!
//! Every segment of every placed tile is a node of a union-find forest; a
//! feature is a tree. Joining two tiles unions the segments that meet across
//! their common edge, and the root keeps what completion and scoring need:
//! open edges, pennants, followers. Each tree also threads a ring through
//! its members, so a feature's tiles can be listed without searching the
//! board. Placing a tile therefore costs a handful of unions, never a flood
//! fill.

use crate::tiles::FeatureKind;

pub(crate) type NodeId = u16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Node {
    parent: NodeId,
    /// Next member of the same feature: a ring through all its nodes.
    next: NodeId,
    /// The tile slot this segment lies on.
    pub tile: u16,
    /// The segment's index in its tile definition.
    pub segment: u8,
    pub kind: FeatureKind,
    // The fields below are valid at roots only.
    /// City or road edges not yet joined to a neighbour.
    open: u16,
    /// Up to one per tile: a bag of 1000 pennant tiles overflows a `u8`.
    pennants: u16,
    /// Followers standing anywhere on the feature.
    followers: u8,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Features {
    nodes: Vec<Node>,
}

impl Features {
    /// Makes room for `nodes` more nodes at once.
    pub fn reserve(&mut self, nodes: usize) {
        self.nodes.reserve(nodes);
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    /// Adds a segment as a feature of its own.
    pub fn add(&mut self, tile: u16, segment: u8, kind: FeatureKind, open: u16, pennants: u16) -> NodeId {
        let id = self.nodes.len() as NodeId;
        self.nodes.push(Node {
            parent: id,
            next: id,
            tile,
            segment,
            kind,
            open,
            pennants,
            followers: 0,
        });
        id
    }

    /// The root of `id`'s feature, halving paths on the way.
    pub fn find(&mut self, mut id: NodeId) -> NodeId {
        while self.nodes[id as usize].parent != id {
            let grandparent = self.nodes[self.nodes[id as usize].parent as usize].parent;
            self.nodes[id as usize].parent = grandparent;
            id = grandparent;
        }
        id
    }

    /// The root of `id`'s feature, without changing anything.
    pub fn root(&self, mut id: NodeId) -> NodeId {
        while self.nodes[id as usize].parent != id {
            id = self.nodes[id as usize].parent;
        }
        id
    }

    /// Joins the features of `a` and `b` across one shared edge; for cities
    /// and roads that edge is closed on both sides.
    pub fn join(&mut self, a: NodeId, b: NodeId, closes_edge: bool) {
        let (ra, rb) = (self.find(a), self.find(b));
        let closed = if closes_edge { 2 } else { 0 };
        if ra == rb {
            // A loop: the feature meets itself.
            let root = &mut self.nodes[ra as usize];
            root.open = root.open.saturating_sub(closed);
            return;
        }
        // Union by index keeps the older node as the root: deterministic,
        // and shallow enough since path halving does the rest.
        let (root, child) = if ra < rb { (ra, rb) } else { (rb, ra) };
        let c = self.nodes[child as usize];
        let r = &mut self.nodes[root as usize];
        r.open = (r.open + c.open).saturating_sub(closed);
        r.pennants += c.pennants;
        r.followers += c.followers;
        // Splice the two rings into one.
        let root_next = r.next;
        r.next = c.next;
        self.nodes[child as usize].next = root_next;
        self.nodes[child as usize].parent = root;
    }

    /// Open city or road edges of the feature whose root is `root`.
    pub fn open(&self, root: NodeId) -> u16 {
        self.nodes[root as usize].open
    }

    pub fn pennants(&self, root: NodeId) -> u16 {
        self.nodes[root as usize].pennants
    }

    pub fn followers(&self, root: NodeId) -> u8 {
        self.nodes[root as usize].followers
    }

    pub fn add_follower(&mut self, root: NodeId) {
        self.nodes[root as usize].followers += 1;
    }

    pub fn clear_followers(&mut self, root: NodeId) {
        self.nodes[root as usize].followers = 0;
    }

    /// Every node of the feature of `root`, starting at `root`.
    pub fn members(&self, root: NodeId) -> Members<'_> {
        Members {
            features: self,
            start: root,
            next: Some(root),
        }
    }

    pub fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * size_of::<Node>()
    }
}

pub(crate) struct Members<'a> {
    features: &'a Features,
    start: NodeId,
    next: Option<NodeId>,
}

impl Iterator for Members<'_> {
    type Item = NodeId;

    fn next(&mut self) -> Option<NodeId> {
        let current = self.next?;
        let after = self.features.nodes[current as usize].next;
        self.next = (after != self.start).then_some(after);
        Some(current)
    }
}
