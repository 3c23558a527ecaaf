-- A task is working from the moment it is accepted (the contract: none → SendMessage →
-- working); tasks recorded as submitted before this are working too.
update agent_tasks set state = 'TASK_STATE_WORKING' where state = 'TASK_STATE_SUBMITTED';
