#include "raid/raid_type.h"
