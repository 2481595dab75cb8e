# sim/: the discrete-event engine. Knows nothing of models/.
SIM_OBJS := \
	$(BUILD)/sim/err.o \
	$(BUILD)/sim/time.o \
	$(BUILD)/sim/pq.o \
	$(BUILD)/sim/engine.o \
	$(BUILD)/sim/rng.o

LIB_OBJS += $(SIM_OBJS)
UNIT_TESTS += err time pq engine rng
