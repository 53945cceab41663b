//! Progress of the first cache sync. On a terminal, one line per informer
//! (objects listed / pages), redrawn in place until every informer has
//! synced; elsewhere, and for later relists, plain log lines.

use std::io::Write;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::clock::SharedClock;

/// The shortest interval between two redraws on a terminal.
const REDRAW_EVERY: Duration = Duration::from_millis(100);

/// Reports how the informers' lists progress.
pub struct SyncProgress {
    clock: SharedClock,
    state: Mutex<State>,
}

struct State {
    informers: Vec<InformerProgress>,
    /// `Some` while drawing on a terminal; `None` once done or elsewhere.
    terminal: Option<Terminal>,
}

struct Terminal {
    out: Box<dyn Write + Send>,
    /// Lines drawn last time, to move back over.
    drawn: usize,
    last_draw: Option<Instant>,
}

struct InformerProgress {
    name: String,
    objects: usize,
    pages: usize,
    synced: bool,
}

/// An informer's place in a [`SyncProgress`].
#[derive(Debug, Clone, Copy)]
pub struct ProgressSlot(usize);

impl SyncProgress {
    /// Progress drawn on `terminal` when given, else logged.
    pub fn new(clock: SharedClock, terminal: Option<Box<dyn Write + Send>>) -> SyncProgress {
        SyncProgress {
            clock,
            state: Mutex::new(State {
                informers: Vec::new(),
                terminal: terminal.map(|out| Terminal {
                    out,
                    drawn: 0,
                    last_draw: None,
                }),
            }),
        }
    }

    /// Drawn on stderr when it is a terminal, else logged.
    pub fn for_stderr(clock: SharedClock) -> SyncProgress {
        let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr())
            .then(|| Box::new(std::io::stderr()) as Box<dyn Write + Send>);
        SyncProgress::new(clock, terminal)
    }

    /// Adds an informer called `name`.
    pub fn informer(&self, name: &str) -> ProgressSlot {
        let mut state = self.state.lock();
        state.informers.push(InformerProgress {
            name: name.to_string(),
            objects: 0,
            pages: 0,
            synced: false,
        });
        ProgressSlot(state.informers.len() - 1)
    }

    /// A list of `slot` began: its counts start again.
    pub fn list_started(&self, slot: ProgressSlot) {
        let mut state = self.state.lock();
        let informer = &mut state.informers[slot.0];
        informer.objects = 0;
        informer.pages = 0;
    }

    /// A page of `objects` arrived for `slot`.
    pub fn page(&self, slot: ProgressSlot, objects: usize) {
        let mut state = self.state.lock();
        let informer = &mut state.informers[slot.0];
        informer.objects += objects;
        informer.pages += 1;
        let (name, objects, pages) = (informer.name.clone(), informer.objects, informer.pages);
        if state.terminal.is_some() {
            self.draw(&mut state, false);
        } else {
            tracing::debug!(informer = %name, objects, pages, "listing");
        }
    }

    /// The list of `slot` finished with `objects` objects.
    pub fn listed(&self, slot: ProgressSlot, objects: usize) {
        let mut state = self.state.lock();
        let informer = &mut state.informers[slot.0];
        let first = !informer.synced;
        informer.synced = true;
        informer.objects = objects;
        let (name, pages) = (informer.name.clone(), informer.pages);
        if state.terminal.is_some() {
            self.draw(&mut state, true);
            if state.informers.iter().all(|informer| informer.synced) {
                state.terminal = None;
            }
        } else if first {
            tracing::info!(informer = %name, objects, pages, "cache synced");
        } else {
            tracing::info!(informer = %name, objects, pages, "relisted");
        }
    }

    /// Redraws every informer's line in place; at most every
    /// [`REDRAW_EVERY`] unless `force`.
    fn draw(&self, state: &mut State, force: bool) {
        let now = self.clock.now();
        let State {
            informers,
            terminal,
        } = state;
        let Some(terminal) = terminal.as_mut() else {
            return;
        };
        if !force
            && terminal
                .last_draw
                .is_some_and(|last| now.saturating_duration_since(last) < REDRAW_EVERY)
        {
            return;
        }
        terminal.last_draw = Some(now);
        let mut text = String::new();
        if terminal.drawn > 0 {
            text.push_str(&format!("\x1b[{}A", terminal.drawn));
        }
        for informer in informers.iter() {
            text.push_str(&format!(
                "\x1b[2K{}: {} objects listed, {} {}{}\n",
                informer.name,
                informer.objects,
                informer.pages,
                if informer.pages == 1 { "page" } else { "pages" },
                if informer.synced { ", synced" } else { "" },
            ));
        }
        terminal.drawn = informers.len();
        // Progress is a courtesy: a failed write is not worth failing for.
        let _ = terminal.out.write_all(text.as_bytes());
        let _ = terminal.out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::FakeClock;
    use crate::ops::Captured as Screen;

    #[test]
    fn a_terminal_gets_one_line_per_informer_redrawn_until_all_synced() {
        let clock = FakeClock::new();
        let screen = Screen::default();
        let progress = SyncProgress::new(clock.shared(), Some(Box::new(screen.clone())));
        let pods = progress.informer("v1/Pod");
        let nodes = progress.informer("v1/Node");
        progress.list_started(pods);
        progress.page(pods, 500);
        assert_eq!(
            screen.text(),
            "\x1b[2Kv1/Pod: 500 objects listed, 1 page\n\
             \x1b[2Kv1/Node: 0 objects listed, 0 pages\n"
        );
        // Within the redraw interval nothing is drawn...
        progress.page(pods, 500);
        assert_eq!(screen.text().matches('\n').count(), 2);
        // ...after it, the block is redrawn in place.
        clock.advance(REDRAW_EVERY);
        progress.page(pods, 500);
        let text = screen.text();
        assert!(
            text.ends_with(
                "\x1b[2A\x1b[2Kv1/Pod: 1500 objects listed, 3 pages\n\
                 \x1b[2Kv1/Node: 0 objects listed, 0 pages\n"
            ),
            "{text:?}"
        );
        // A finished list is always drawn.
        progress.listed(pods, 1500);
        assert!(screen.text().ends_with(
            "\x1b[2Kv1/Pod: 1500 objects listed, 3 pages, synced\n\
             \x1b[2Kv1/Node: 0 objects listed, 0 pages\n"
        ));
        progress.list_started(nodes);
        progress.page(nodes, 3);
        progress.listed(nodes, 3);
        assert!(
            screen
                .text()
                .ends_with("\x1b[2Kv1/Node: 3 objects listed, 1 page, synced\n")
        );
        // Once all have synced, the terminal is left alone.
        let before = screen.text();
        clock.advance(REDRAW_EVERY);
        progress.list_started(pods);
        progress.page(pods, 10);
        progress.listed(pods, 10);
        assert_eq!(screen.text(), before);
    }
}
