app_name = "judges"

urlpatterns = []
