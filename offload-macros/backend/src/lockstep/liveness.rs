//! Liveness: which bindings a later part of the body may still read.

use super::*;

#[derive(Default)]
pub(super) struct Liveness {
    /// Bindings live before each node, by the node's address.
    pub(super) before: HashMap<usize, HashSet<usize>>,
    /// Bindings live after each node.
    pub(super) after: HashMap<usize, HashSet<usize>>,
}

pub(super) fn addr<T>(n: &T) -> usize {
    n as *const T as usize
}

impl Liveness {
    /// Live before `nodes`, given what is live after them.
    pub(super) fn nodes(&mut self, nodes: &[RNode<'_>], after: &HashSet<usize>) -> HashSet<usize> {
        let mut live = after.clone();
        for n in nodes.iter().rev() {
            self.after.insert(addr(n), live.clone());
            live = self.node(n, &live);
            self.before.insert(addr(n), live.clone());
        }
        live
    }

    pub(super) fn node(&mut self, n: &RNode<'_>, after: &HashSet<usize>) -> HashSet<usize> {
        match n {
            RNode::Plain { uses, decls, kills, .. } => {
                let mut live = after.clone();
                for d in decls.iter().chain(kills) {
                    live.remove(d);
                }
                live.extend(uses);
                live
            }
            RNode::Wait { kind, uses, .. } => {
                let mut live = live_mid(kind, after);
                live.extend(uses);
                live
            }
            RNode::While { uses, body, .. } => {
                // The head: what the condition reads, what follows the loop, and what the body
                // reads (its end leads back to the head): to a fixed point.
                let mut head: HashSet<usize> = after.union(uses).copied().collect();
                loop {
                    let body_in = self.nodes(body, &head);
                    let next: HashSet<usize> = head.union(&body_in).copied().collect();
                    if next == head {
                        break;
                    }
                    head = next;
                }
                head
            }
            RNode::For { it, uses, decls, body, .. } => {
                let mut head: HashSet<usize> = after.clone();
                head.insert(*it);
                loop {
                    let mut body_in = self.nodes(body, &head);
                    for d in decls {
                        body_in.remove(d);
                    }
                    let next: HashSet<usize> = head.union(&body_in).copied().collect();
                    if next == head {
                        break;
                    }
                    head = next;
                }
                let mut live = head;
                live.remove(it);
                live.extend(uses);
                live
            }
            RNode::Block(inner) => self.nodes(inner, after),
            RNode::If { uses, then, els, .. } => {
                let mut live = self.nodes(then, after);
                match els {
                    Some(e) => live.extend(self.nodes(e, after)),
                    None => live.extend(after),
                }
                live.extend(uses);
                live
            }
        }
    }
}
