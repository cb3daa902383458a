"""Delivery: handing events to integrations, exactly once while workers live.

A submission writes one Delivery row per matching integration in its own transaction
(``enqueue``); the Celery message sent after commit is only a nudge (``nudge``). A worker
claims due rows in batches with a conditional UPDATE (``claim``), makes one attempt at each
(``attempt``: a batch's destinations side by side, each one's rows in order) and records it,
keeping the retry schedule in the row (``record``). The sweeper re-queues what is due or
abandoned, and owners retry what failed (``retry``), so a lost message or a dead worker only
delays a delivery. A delivery that fails for good tells its owner (``alerts``). A single
delivery (a test send, a short retry's message) is a batch of one. Each success is recorded the
moment it ends, so a worker that dies repeats only the attempts it had in flight; a destination
whose attempts keep taking most of their deadline goes by a slow lane, one attempt at a time in
a thread of each worker process (``worker``), so it holds up nobody else.

Exactly once while workers live: each claim writes a fresh fencing token (``claim``) into its
rows, and every later write of the claim (renewing the lease, recording an attempt) is made
``WHERE id = ... AND claim = ...``, so a worker whose lease lapsed can record nothing over the
worker that took the rows next. A lease lapses only if its worker dies or stalls: every
attempt ends within its 10 s deadline (integrations/clients/http.py cuts it), well inside the
20 s lease renewed before each attempt. Lease and retry times come from the database's clock
(core/infra/dbclock.py), so machines whose clocks differ agree on when a lease has lapsed.

Rules of the room: the modules import one another downward only (tasks, worker, retry,
attempt, record, alerts, transports, claim, enqueue, nudge, messages, backends); a lower
module sends a task's message by its registered name (``messages``), never by importing the
task. Where PostgreSQL or Redis needs code of its own, it is in ``backends``, chosen once.
"""
