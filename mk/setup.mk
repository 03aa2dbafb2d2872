# The set-up steps themselves: each must install what is missing on a bare machine.

TEST_TARGETS += test-setup
.PHONY: test-setup

test-setup: setup-server ## every setup step on a PATH without its tools, with fake installers that record their calls; pg-start.sh with the real PostgreSQL
	node --test --test-reporter=spec tests/setup/
