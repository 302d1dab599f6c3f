// The tables of the state database as Table / ChildTable descriptions (store/table.h): one
// per kind of object, in the column order of store/schema.cpp. Internal to store/.
#pragma once

#include <string>
#include <utility>

#include "controller/journal.h"
#include "controller/objects.h"
#include "store/table.h"

namespace afasim::store {

using MetaPair = std::pair<std::string, std::string>;

const Table<controller::Pool>& pools_table();
const ChildTable<controller::Pool, controller::Id>& pool_datapacs_table();
const ChildTable<controller::Pool, int>& pool_thresholds_table();
const Table<controller::QosPolicy>& qos_policies_table();
const Table<controller::Volume>& volumes_table();
const Table<controller::Host>& hosts_table();
const ChildTable<controller::Host, controller::Initiator>& host_initiators_table();
const Table<controller::Mapping>& mappings_table();
const Table<controller::ExtentRecord>& extents_table();
const Table<controller::Event>& events_table();
const Table<MetaPair>& meta_table();

}  // namespace afasim::store
