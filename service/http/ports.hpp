#pragma once

#include "service/ports/actuals_store.hpp"
#include "service/ports/catalog_store.hpp"
#include "service/ports/price_book_store.hpp"
#include "service/ports/principal.hpp"
#include "service/ports/scenario_store.hpp"
#include "service/ports/write_request.hpp"

namespace gpucost::http {

// The storage ports (service/ports/) under the names the handlers use: the HTTP adapter
// depends on them, and nothing under service/ports/ depends back.
using ports::ActualClassMonth;
using ports::ActualMonth;
using ports::ActualsImport;
using ports::ActualsImportRecord;
using ports::ActualsStore;
using ports::CatalogReads;
using ports::CatalogStore;
using ports::CatalogWrites;
using ports::DeletedAnswer;
using ports::FocusTagKeys;
using ports::FocusTextReader;
using ports::kActualsTagKey;
using ports::kDefaultTeam;
using ports::KeyAuthenticator;
using ports::KeyScope;
using ports::KeyScopeName;
using ports::kIfMatchField;
using ports::kMaxActualsTagKeyBytes;
using ports::kOwnerField;
using ports::NewPrice;
using ports::OfferingEtag;
using ports::OfferingHistory;
using ports::PlansWithBook;
using ports::PriceBookEtag;
using ports::PriceBookStore;
using ports::PriceInterval;
using ports::PriceUpdate;
using ports::Principal;
using ports::ReadsBook;
using ports::ReadsTeam;
using ports::Scenario;
using ports::ScenarioChange;
using ports::ScenarioEtag;
using ports::ScenarioFilter;
using ports::ScenarioPage;
using ports::ScenarioProgress;
using ports::ScenarioStore;
using ports::StoredPriceBook;
using ports::StoredResponse;
using ports::StoreHealth;
using ports::StoreHealthProbe;
using ports::TimestampUs;
using ports::WriteRequest;

}  // namespace gpucost::http
