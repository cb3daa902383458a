"""Public intake: ``/api/v1/f/{slug}``, from the door to one stored submission.

The rule of this room: a request enters only through ``middleware.py`` (the one door), runs
``pipeline.accept`` (the checks in the contract's order, the one place a stale kept form is
read afresh and run again), holds its reservation inside ``admission.admitted`` (given back
exactly when it ends without storing), and stores through ``store`` (PostgreSQL's one
statement or the ORM's transaction, chosen once at start). Other apps hear of an accepted
submission through ``submissions.hooks``, never by intake importing them. The walk of one
submission is in docs/architecture.md.
"""
