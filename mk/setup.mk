# The set-up steps themselves: each must install what is missing on a bare machine.

TEST_TARGETS += test-setup
.PHONY: test-setup

test-setup: ## every setup step on a PATH without its tools, with fake installers that record their calls
	node --test --test-reporter=spec tests/setup/
